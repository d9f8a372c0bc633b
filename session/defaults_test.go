package session

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/settings"
)

// TestDefaultsAgreeWithSettings: the zero values of session.Config and
// agent.Config mean what the settings' defaults say. settings sits below
// session and agent (DESIGN §1) and cannot import their constants, so the
// two declarations are pinned here, and settings.Default must carry them.
func TestDefaultsAgreeWithSettings(t *testing.T) {
	d := settings.Default()
	for _, c := range []struct {
		name               string
		lib, settings, got int
	}{
		{"compaction threshold percent", DefaultThresholdPercent, settings.DefaultThresholdPercent, d.Compaction.ThresholdPercent},
		{"compaction keep recent tokens", DefaultKeepRecentTokens, settings.DefaultKeepRecentTokens, d.Compaction.KeepRecentTokens},
		{"agent max turns", agent.DefaultMaxTurns, settings.DefaultMaxTurns, d.Agent.MaxTurns},
	} {
		if c.lib != c.settings || c.got != c.lib {
			t.Errorf("%s: library %d, settings constant %d, settings.Default %d", c.name, c.lib, c.settings, c.got)
		}
	}
}

// TestHookEventsAreTheSessionKinds: the settings' hooks[].on enum (which
// settings cannot take from here) is exactly the session's event kinds.
func TestHookEventsAreTheSessionKinds(t *testing.T) {
	kinds := EventTypes()
	f, _ := reflect.TypeOf(settings.Hook{}).FieldByName("On")
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

// TestLoopKindsAreTheAgents: the loop's kinds are session kinds unchanged.
func TestLoopKindsAreTheAgents(t *testing.T) {
	for _, e := range []agent.Event{agent.AgentStartEvent{}, agent.AgentEndEvent{}, agent.TurnStartEvent{}, agent.TurnEndEvent{},
		agent.MessageStartEvent{}, agent.MessageUpdateEvent{}, agent.MessageEndEvent{},
		agent.ToolExecutionStartEvent{}, agent.ToolExecutionUpdateEvent{}, agent.ToolExecutionEndEvent{}} {
		if !slices.Contains(EventTypes(), e.Kind()) {
			t.Errorf("agent kind %q is not a session kind", e.Kind())
		}
	}
}
