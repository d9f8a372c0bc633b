package session

import (
	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// EventType names a session event. The values are the RPC wire names
// (docs/rpc.md), so a kind can be matched against a JSON line's "type".
type EventType = agent.EventType

// The agent loop's events, passed through: their names are the loop's
// (package agent has them once; the values are "agent_start",
// "message_update", … as on the wire)…
const (
	AgentStart          = agent.AgentStart
	AgentEnd            = agent.AgentEnd
	TurnStart           = agent.TurnStart
	TurnEnd             = agent.TurnEnd
	MessageStart        = agent.MessageStart
	MessageUpdate       = agent.MessageUpdate
	MessageEnd          = agent.MessageEnd
	ToolExecutionStart  = agent.ToolExecutionStart
	ToolExecutionUpdate = agent.ToolExecutionUpdate
	ToolExecutionEnd    = agent.ToolExecutionEnd
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
	// StreamResumed says a dropped stream was continued where it stopped
	// (retry.streaming "resume"), not restarted.
	StreamResumed EventType = "stream_resumed"
)

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

// Event is one thing that happened in a session: one of the *Event types
// of this package, each the only definition of its kind (the loop's are
// package agent's, named here). Switch on the type to read one; its JSON
// tags are its wire form (package rpc/wire adds the "type").
type Event interface{ Kind() EventType }

// The agent loop's events, passed through as the loop emits them (the
// session sets AgentEndEvent.WillRetry).
type (
	AgentStartEvent          = agent.AgentStartEvent
	AgentEndEvent            = agent.AgentEndEvent
	TurnStartEvent           = agent.TurnStartEvent
	TurnEndEvent             = agent.TurnEndEvent
	MessageStartEvent        = agent.MessageStartEvent
	MessageUpdateEvent       = agent.MessageUpdateEvent
	MessageEndEvent          = agent.MessageEndEvent
	ToolExecutionStartEvent  = agent.ToolExecutionStartEvent
	ToolExecutionUpdateEvent = agent.ToolExecutionUpdateEvent
	ToolExecutionEndEvent    = agent.ToolExecutionEndEvent
)

// AgentSettledEvent ends every operation (a prompt with all its retries
// and compactions, a continue, an explicit compaction): what Run.Done
// waits for. Nothing of a later operation comes before it.
type AgentSettledEvent struct {
	// Err is the operation's result, what Prompt, Continue or Compact
	// returns (nil on success): a subscriber that started the operation
	// learns its outcome in order with its events, without also waiting
	// for the call to return. It stays off the wire: an RPC client has the
	// failure from the events before this one.
	Err error `json:"-"`
}

// MessageDiscardedEvent carries a partial streamed message that a retry
// throws away, so a UI can take its text back.
type MessageDiscardedEvent struct {
	Message *llm.Message `json:"message"`
}

// CompactionStartEvent says a compaction begins, and why.
type CompactionStartEvent struct {
	Reason CompactionReason `json:"reason"`
}

// CompactionEndEvent says how it ended: Result is nil unless it
// succeeded; ErrorMessage says why it failed; WillRetry that the run it
// was for goes on.
type CompactionEndEvent struct {
	Aborted      bool              `json:"aborted"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
	Reason       CompactionReason  `json:"reason"`
	Result       *CompactionResult `json:"result"`
	WillRetry    bool              `json:"willRetry"`
}

// AutoRetryStartEvent announces retry Attempt of MaxAttempts after
// DelayMs, for a failure of ErrorClass saying ErrorMessage; SwitchedTo
// names the credential or "provider/model" moved to, if any.
type AutoRetryStartEvent struct {
	Attempt      int         `json:"attempt"`
	DelayMs      int64       `json:"delayMs"`
	ErrorClass   retry.Class `json:"errorClass"`
	ErrorMessage string      `json:"errorMessage"`
	MaxAttempts  int         `json:"maxAttempts"`
	SwitchedTo   string      `json:"switchedTo,omitempty"`
	// Resume is how the wait's call goes on ("cursor", "continuation")
	// when it continues a dropped stream rather than retrying the call.
	Resume string `json:"resume,omitempty"`
}

// AutoRetryEndEvent closes a retry chain at Attempt: Success, or the
// FinalError (RetryCancelled when cancelled).
type AutoRetryEndEvent struct {
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
	Success    bool   `json:"success"`
}

// SessionErrorEvent says that persisting failed (a full disk): Op is what
// was being saved (one of the Op* values), ErrorMessage why. The session
// goes on in memory; the Store's file lacks that entry (Session.StoreErr).
type SessionErrorEvent struct {
	ErrorMessage string `json:"error"`
	Op           string `json:"op"`
}

// StreamResumedEvent says the stream of the message being streamed broke
// and was continued at retry Attempt, GapMs after it broke: from the
// provider's Cursor (the last event seen), or as a Continuation of the
// partial answer. The message goes on with the same message_update stream;
// nothing was discarded.
type StreamResumedEvent struct {
	Attempt      int    `json:"attempt"`
	Continuation bool   `json:"continuation,omitempty"`
	Cursor       string `json:"cursor,omitempty"`
	GapMs        int64  `json:"gapMs"`
}

func (AgentSettledEvent) Kind() EventType     { return AgentSettled }
func (MessageDiscardedEvent) Kind() EventType { return MessageDiscarded }
func (CompactionStartEvent) Kind() EventType  { return CompactionStart }
func (CompactionEndEvent) Kind() EventType    { return CompactionEnd }
func (AutoRetryStartEvent) Kind() EventType   { return AutoRetryStart }
func (AutoRetryEndEvent) Kind() EventType     { return AutoRetryEnd }
func (SessionErrorEvent) Kind() EventType     { return SessionError }
func (StreamResumedEvent) Kind() EventType    { return StreamResumed }

// events holds a zero value of every kind, in the order of docs/rpc.md:
// EventTypes and ZeroEvent read it, so a kind is listed once.
var events = [...]Event{
	AgentStartEvent{}, AgentEndEvent{}, AgentSettledEvent{},
	TurnStartEvent{}, TurnEndEvent{},
	MessageStartEvent{}, MessageUpdateEvent{}, MessageEndEvent{}, MessageDiscardedEvent{},
	ToolExecutionStartEvent{}, ToolExecutionUpdateEvent{}, ToolExecutionEndEvent{},
	CompactionStartEvent{}, CompactionEndEvent{},
	AutoRetryStartEvent{}, AutoRetryEndEvent{}, RetryWaitingEvent{}, RetryHeartbeatEvent{},
	SessionErrorEvent{},
	StreamResumedEvent{},
}

// EventTypes lists every kind, in the order of docs/rpc.md: what a hook's
// "on" may name.
func EventTypes() []EventType {
	out := make([]EventType, len(events))
	for i, e := range events {
		out[i] = e.Kind()
	}
	return out
}

// ZeroEvent returns the zero event of kind k (what package rpc/wire
// decodes a line of that kind into), or false for a kind this package
// lacks.
func ZeroEvent(k EventType) (Event, bool) {
	for _, e := range events {
		if e.Kind() == k {
			return e, true
		}
	}
	return nil, false
}

// session_error's Op values: what the session was saving when it failed.
const (
	OpSaveMessage     = "save message"
	OpSaveModelChange = "save model change"
	OpSaveCompaction  = "save compaction"
)
