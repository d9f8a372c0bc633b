package agent

import (
	"encoding/json"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// Event types of the agent loop, and of the session around it (DESIGN §3.2,
// §6.2). The names are the RPC wire names.
const (
	AgentStart          = "agent_start"
	AgentEnd            = "agent_end"
	AgentSettled        = "agent_settled"
	TurnStart           = "turn_start"
	TurnEnd             = "turn_end"
	MessageStart        = "message_start"
	MessageUpdate       = "message_update"
	MessageEnd          = "message_end"
	MessageDiscarded    = "message_discarded"
	ToolExecutionStart  = "tool_execution_start"
	ToolExecutionUpdate = "tool_execution_update"
	ToolExecutionEnd    = "tool_execution_end"
	CompactionStart     = "compaction_start"
	CompactionEnd       = "compaction_end"
	AutoRetryStart      = "auto_retry_start"
	AutoRetryEnd        = "auto_retry_end"
)

// Event is one thing that happened in a run. Only the fields of its Type
// are meaningful; MarshalJSON writes exactly those, in the wire shapes, and
// UnmarshalJSON reads them back (json.go).
type Event struct {
	Type string

	// message_start, message_update, message_end, message_discarded,
	// turn_end.
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

	// agent_end, compaction_end.
	WillRetry bool

	// auto_retry_start, auto_retry_end.
	Attempt      int
	MaxAttempts  int
	DelayMs      int64
	ErrorMessage string
	ErrorClass   string
	SwitchedTo   string
	Success      bool
	FinalError   string

	// compaction_start, compaction_end.
	Reason     string
	Compaction any
	Aborted    bool
}
