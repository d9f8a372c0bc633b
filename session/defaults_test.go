package session

import (
	"slices"
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
