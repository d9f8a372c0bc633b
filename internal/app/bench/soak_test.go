//go:build soak

package bench

import (
	"os"
	"strconv"
	"testing"
)

// TestSoak is the long chaos run: go test -tags soak -run Soak
// ./internal/app/bench (-timeout 30m). RALLY_SOAK_SESSIONS and
// RALLY_SOAK_PROMPTS resize it; RALLY_CHAOS_SEED replays a run.
func TestSoak(t *testing.T) {
	cfg := chaosConfig{sessions: envInt(t, "RALLY_SOAK_SESSIONS", 500), prompts: envInt(t, "RALLY_SOAK_PROMPTS", 40), seed: chaosSeed(t)}
	succeeded, failed, outcomes := runChaos(t, cfg)
	if succeeded == 0 {
		t.Errorf("no prompt succeeded (%d failed): the schedule tests nothing", failed)
	}
	// Every way the fake LLM can answer came up.
	for _, kind := range []string{"ok", "http 503", "http 500", "http 429", "http 400", "http 401", "http 404", "reset", "drop", "stall", "error event"} {
		if outcomes[kind] == 0 {
			t.Errorf("no request answered %q: %v", kind, outcomes)
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
