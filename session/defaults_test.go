package session

import (
	"slices"
	"testing"

	"github.com/rally-agent/rally/agent"
)

// TestLoopKindsAreTheAgents: the loop's kinds pass through unchanged.
func TestLoopKindsAreTheAgents(t *testing.T) {
	for _, k := range []agent.EventType{agent.AgentStart, agent.AgentEnd, agent.TurnStart, agent.TurnEnd,
		agent.MessageStart, agent.MessageUpdate, agent.MessageEnd,
		agent.ToolExecutionStart, agent.ToolExecutionUpdate, agent.ToolExecutionEnd} {
		if e := fromLoop(agent.Event{Type: k}); !slices.Contains(EventTypes(), e.Type) || string(e.Type) != string(k) {
			t.Errorf("agent kind %q became %q", k, e.Type)
		}
	}
}
