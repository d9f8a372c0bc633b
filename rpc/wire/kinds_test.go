package wire

import (
	"reflect"
	"testing"

	"github.com/rally-agent/rally/session"
)

// TestEveryKindDecodesToItsStruct: a line of each session kind decodes to
// that kind's struct, so a new kind needs no decoder change.
func TestEveryKindDecodesToItsStruct(t *testing.T) {
	for _, k := range session.EventTypes() {
		t.Run(string(k), func(t *testing.T) {
			zero, ok := session.ZeroEvent(k)
			if !ok || zero.Kind() != k {
				t.Fatalf("ZeroEvent(%s) = %#v, %v", k, zero, ok)
			}
			got, err := DecodeEvent(AppendEvent(nil, zero))
			if err != nil {
				t.Fatal(err)
			}
			if reflect.TypeOf(got) != reflect.TypeOf(zero) {
				t.Errorf("decoded as %T, want %T", got, zero)
			}
		})
	}
}

// TestUnknownKindPassesThrough: a line of a kind this rally does not know
// (a newer server's) is handed over whole and written back unchanged.
func TestUnknownKindPassesThrough(t *testing.T) {
	line := `{"type":"future_kind","attempt":1,"remainingMs":900}`
	e, err := DecodeEvent([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := e.(Unknown)
	if !ok || u.Kind() != "future_kind" {
		t.Fatalf("decoded as %#v", e)
	}
	if got := string(AppendEvent(nil, e)); got != line {
		t.Errorf("written back as %s", got)
	}
}
