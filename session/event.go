package session

import (
	"encoding/json"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/tool"
)

// EventType names a session event. The values are the RPC wire names
// (docs/rpc.md), so a kind can be matched against a JSON line's "type".
type EventType string

// The agent loop's events, passed through: their names are the loop's
// (package agent has them once; the values are "agent_start",
// "message_update", … as on the wire)…
const (
	AgentStart          EventType = EventType(agent.AgentStart)
	AgentEnd            EventType = EventType(agent.AgentEnd)
	TurnStart           EventType = EventType(agent.TurnStart)
	TurnEnd             EventType = EventType(agent.TurnEnd)
	MessageStart        EventType = EventType(agent.MessageStart)
	MessageUpdate       EventType = EventType(agent.MessageUpdate)
	MessageEnd          EventType = EventType(agent.MessageEnd)
	ToolExecutionStart  EventType = EventType(agent.ToolExecutionStart)
	ToolExecutionUpdate EventType = EventType(agent.ToolExecutionUpdate)
	ToolExecutionEnd    EventType = EventType(agent.ToolExecutionEnd)
)

// …and the session's own.
const (
	// AgentSettled is emitted once when a prompt, all its retries and its
	// compaction are over: the end of what Prompt waits for.
	AgentSettled EventType = "agent_settled"
	// MessageDiscarded carries a partial streamed message that a retry
	// throws away, so a UI can take its text back.
	MessageDiscarded EventType = "message_discarded"
	CompactionStart  EventType = "compaction_start"
	CompactionEnd    EventType = "compaction_end"
	AutoRetryStart   EventType = "auto_retry_start"
	AutoRetryEnd     EventType = "auto_retry_end"
	// SessionError says that persisting failed (a full disk): Op is what
	// was being saved, ErrorMessage why. The session goes on in memory;
	// the Store's file lacks that entry (Session.StoreErr).
	SessionError EventType = "session_error"
)

// EventTypes lists every kind, in the order of docs/rpc.md: what a hook's
// "on" may name.
func EventTypes() []EventType {
	return []EventType{
		AgentStart, AgentEnd, AgentSettled,
		TurnStart, TurnEnd,
		MessageStart, MessageUpdate, MessageEnd, MessageDiscarded,
		ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd,
		CompactionStart, CompactionEnd,
		AutoRetryStart, AutoRetryEnd,
		SessionError,
	}
}

// CompactionReason says why a compaction ran.
type CompactionReason string

// Compaction reasons, as compaction_start and compaction_end carry them.
const (
	ReasonOverflow  CompactionReason = "overflow"
	ReasonThreshold CompactionReason = "threshold"
	ReasonManual    CompactionReason = "manual"
)

// RetryCancelled is auto_retry_end's FinalError when a retry was cancelled.
const RetryCancelled = "Retry cancelled"

// Event is one thing that happened in a session. Only the fields of its
// Type are meaningful; package rpc/wire writes and reads the JSON form.
type Event struct {
	Type EventType

	// message_start, message_update, message_end, message_discarded,
	// turn_end.
	Message *llm.Message
	// message_update: the provider stream's event; its Partial is Message.
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

	// agent_end, compaction_end: a retry (or the run the compaction was
	// for) follows, so this is not the end of the prompt.
	WillRetry bool

	// auto_retry_start: retry Attempt of MaxAttempts after DelayMs, for a
	// failure of ErrorClass saying ErrorMessage; SwitchedTo names the
	// credential or "provider/model" moved to, if any.
	// auto_retry_end: Success, the Attempt it ended at, and FinalError on
	// failure (RetryCancelled when cancelled).
	Attempt      int
	MaxAttempts  int
	DelayMs      int64
	ErrorMessage string // also compaction_end's failure and session_error's error
	ErrorClass   retry.Class
	SwitchedTo   string
	Success      bool
	FinalError   string

	// compaction_start, compaction_end; Compaction is nil unless the
	// compaction succeeded.
	Reason     CompactionReason
	Compaction *CompactionResult
	Aborted    bool

	// session_error: what failed to be saved (one of the Op* values).
	Op string
}

// session_error's Op values: what the session was saving when it failed.
const (
	OpSaveMessage     = "save message"
	OpSaveModelChange = "save model change"
	OpSaveCompaction  = "save compaction"
)

// fromLoop is a loop event as a session event.
func fromLoop(e agent.Event) Event {
	return Event{
		Type: EventType(e.Type), Message: e.Message, Assistant: e.Assistant, Messages: e.Messages,
		ToolResults: e.ToolResults, ToolCallID: e.ToolCallID, ToolName: e.ToolName, Args: e.Args,
		Result: e.Result, IsError: e.IsError,
	}
}
