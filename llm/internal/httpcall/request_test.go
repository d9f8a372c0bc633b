package httpcall

import (
	"encoding/json"
	"testing"
)

func TestObjectAndSchema(t *testing.T) {
	for in, want := range map[string]string{`{"a":1}`: `{"a":1}`, `{}`: `{}`, `[1]`: `{}`, `null`: `{}`, `not json`: `{}`, ``: `{}`} {
		if got := string(Object(json.RawMessage(in))); got != want {
			t.Errorf("Object(%q) = %q, want %q", in, got, want)
		}
	}
	const empty = `{"type":"object","properties":{}}`
	for in, want := range map[string]string{`{"type":"object"}`: `{"type":"object"}`, `null`: empty, ``: empty} {
		if got := string(Schema(json.RawMessage(in))); got != want {
			t.Errorf("Schema(%q) = %q, want %q", in, got, want)
		}
	}
	if ThinkingBudget("high") <= ThinkingBudget("minimal") || ThinkingBudget("off") != 0 || ThinkingBudget("") != 0 {
		t.Error("thinking budgets out of order")
	}
}
