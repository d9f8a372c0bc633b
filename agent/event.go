package agent

import (
	"encoding/json"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// EventType names a loop event. The values are the RPC wire names
// (docs/rpc.md); the session re-exports them beside its own kinds.
type EventType string

// The events of the agent loop. Retries, compaction and settling are the
// session's (package session), not the loop's.
const (
	AgentStart          EventType = "agent_start"
	AgentEnd            EventType = "agent_end"
	TurnStart           EventType = "turn_start"
	TurnEnd             EventType = "turn_end"
	MessageStart        EventType = "message_start"
	MessageUpdate       EventType = "message_update"
	MessageEnd          EventType = "message_end"
	ToolExecutionStart  EventType = "tool_execution_start"
	ToolExecutionUpdate EventType = "tool_execution_update"
	ToolExecutionEnd    EventType = "tool_execution_end"
)

// Event is one thing that happened in a run. Only the fields of its Type
// are meaningful.
type Event struct {
	Type EventType

	// message_start, message_update, message_end, turn_end.
	Message *llm.Message
	// message_update: the provider stream's event.
	Assistant *llm.Event
	// agent_end: the messages the run added.
	Messages []llm.Message
	// turn_end: the tool results of the turn.
	ToolResults []llm.Message

	// tool_execution_*.
	ToolCallID string
	ToolName   string
	Args       json.RawMessage
	Result     *tool.Result
	IsError    bool
}
