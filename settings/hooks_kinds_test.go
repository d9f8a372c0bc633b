package settings

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rally-agent/rally/session"
)

// TestHookEventsAreTheSessionKinds: the hooks[].on enum of the schema is
// exactly the session's event kinds.
func TestHookEventsAreTheSessionKinds(t *testing.T) {
	kinds := session.EventTypes()
	f, _ := reflect.TypeOf(Hook{}).FieldByName("On")
	var enum []string
	for _, part := range strings.Split(f.Tag.Get("jsonschema"), ",") {
		if v, ok := strings.CutPrefix(part, "enum="); ok {
			enum = append(enum, v)
		}
	}
	var names []string
	for _, k := range kinds {
		names = append(names, string(k))
	}
	slices.Sort(enum)
	slices.Sort(names)
	if !slices.Equal(enum, names) {
		t.Errorf("hooks on enum %v\nsession kinds %v", enum, names)
	}
}
