package session

import (
	"slices"
	"testing"

	"github.com/rally-agent/rally/agent"
)

// TestLoopKindsAreTheAgents: the loop's kinds pass through unchanged.
func TestLoopKindsAreTheAgents(t *testing.T) {
	for _, e := range []agent.Event{agent.AgentStartEvent{}, agent.AgentEndEvent{}, agent.TurnStartEvent{}, agent.TurnEndEvent{},
		agent.MessageStartEvent{}, agent.MessageUpdateEvent{}, agent.MessageEndEvent{},
		agent.ToolExecutionStartEvent{}, agent.ToolExecutionUpdateEvent{}, agent.ToolExecutionEndEvent{}} {
		if !slices.Contains(EventTypes(), e.Kind()) {
			t.Errorf("agent kind %q is not a session kind", e.Kind())
		}
	}
}
