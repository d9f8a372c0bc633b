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
// are meaningful; MarshalJSON writes exactly those, in the wire shapes.
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

type toolResultJSON struct {
	Content []llm.Content `json:"content"`
	IsError bool          `json:"isError"`
}

func resultJSON(r *tool.Result) *toolResultJSON {
	if r == nil {
		return nil
	}
	c := r.Content
	if c == nil {
		c = []llm.Content{}
	}
	return &toolResultJSON{Content: c, IsError: r.IsError}
}

// MarshalJSON writes the event in its wire shape.
func (e Event) MarshalJSON() ([]byte, error) {
	type M = map[string]any
	m := M{"type": e.Type}
	switch e.Type {
	case MessageStart, MessageEnd, MessageDiscarded:
		m["message"] = e.Message
	case MessageUpdate:
		m["message"] = e.Message
		m["assistantMessageEvent"] = e.Assistant
	case AgentEnd:
		msgs := e.Messages
		if msgs == nil {
			msgs = []llm.Message{}
		}
		m["messages"] = msgs
		m["willRetry"] = e.WillRetry
	case TurnEnd:
		res := e.ToolResults
		if res == nil {
			res = []llm.Message{}
		}
		m["message"] = e.Message
		m["toolResults"] = res
	case ToolExecutionStart:
		m["toolCallId"], m["toolName"], m["args"] = e.ToolCallID, e.ToolName, rawOrEmpty(e.Args)
	case ToolExecutionUpdate:
		m["toolCallId"], m["toolName"], m["args"] = e.ToolCallID, e.ToolName, rawOrEmpty(e.Args)
		m["partialResult"] = resultJSON(e.Result)
	case ToolExecutionEnd:
		m["toolCallId"], m["toolName"] = e.ToolCallID, e.ToolName
		m["result"], m["isError"] = resultJSON(e.Result), e.IsError
	case AutoRetryStart:
		m["attempt"], m["maxAttempts"], m["delayMs"] = e.Attempt, e.MaxAttempts, e.DelayMs
		m["errorMessage"], m["errorClass"] = e.ErrorMessage, e.ErrorClass
		if e.SwitchedTo != "" {
			m["switchedTo"] = e.SwitchedTo
		}
	case AutoRetryEnd:
		m["success"], m["attempt"] = e.Success, e.Attempt
		if !e.Success {
			m["finalError"] = e.FinalError
		}
	case CompactionStart:
		m["reason"] = e.Reason
	case CompactionEnd:
		m["reason"], m["result"], m["aborted"], m["willRetry"] = e.Reason, e.Compaction, e.Aborted, e.WillRetry
	}
	return json.Marshal(m)
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("{}")
	}
	return r
}
