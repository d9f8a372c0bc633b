package hooks

import (
	"encoding/json"
	"slices"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/rpc/wire"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// This file is everything the hooks know about the shape of a session
// event: its wire name, its wire encoding and a sample of each kind.

// Event is what a hook is told about: a session event.
type Event = session.Event

// typeOf is the event's wire name, the one `on` lists.
func typeOf(e Event) string { return string(e.Kind()) }

// Encode is the event as one JSON line (newline included), exactly the
// line `--mode rpc --events delta` writes for it: what a hook reads. A
// message_update is in the delta form (its stream event, never the partial
// message): the full form costs O(answer so far) per delta, so a hook on
// message_update made a long answer quadratic and, with the subscription
// waiting on Handle, slowed the session itself. The message is on
// message_start and message_end.
func Encode(e Event) []byte {
	enc := wire.Encoder{Deltas: true}
	return append(enc.Encode(e), '\n')
}

// Types lists the event names a hook may list in `on`, in the order of
// docs/rpc.md. The settings schema enumerates the same names (a test keeps
// the two in step), so an unknown name is a settings error naming its path.
func Types() []string {
	var names []string
	for _, t := range session.EventTypes() {
		names = append(names, string(t))
	}
	return names
}

// Known reports whether name is an event type.
func Known(name string) bool { return slices.Contains(Types(), name) }

// Sample returns a plausible event of the named type, for `rally hooks
// test`. auto_retry_end is the failed kind (success false), the one a
// notification hook filters for. ok is false for an unknown name.
func Sample(name string) (e Event, ok bool) {
	const errMsg = `529 overloaded_error: Overloaded`
	answer := &llm.Message{
		Role:       llm.Assistant,
		Content:    []llm.Content{llm.Text("This is a sample answer from rally hooks test.")},
		API:        "openai-completions",
		Provider:   "sample",
		Model:      "sample-model",
		StopReason: llm.Stop,
		Timestamp:  1764590400000,
	}
	args := json.RawMessage(`{"command":"echo hello"}`)
	out := &tool.Result{Content: []llm.Content{llm.Text("hello\n")}}
	const id, bash = "call_sample", "bash"
	switch session.EventType(name) {
	case session.AgentStart:
		return session.AgentStartEvent{}, true
	case session.AgentSettled:
		return session.AgentSettledEvent{}, true
	case session.TurnStart:
		return session.TurnStartEvent{}, true
	case session.AgentEnd:
		return session.AgentEndEvent{Messages: []llm.Message{*answer}}, true
	case session.TurnEnd:
		return session.TurnEndEvent{Message: answer, ToolResults: []llm.Message{}}, true
	case session.MessageStart:
		return session.MessageStartEvent{Message: answer}, true
	case session.MessageEnd:
		return session.MessageEndEvent{Message: answer}, true
	case session.MessageDiscarded:
		return session.MessageDiscardedEvent{Message: answer}, true
	case session.MessageUpdate:
		delta := &llm.Event{Type: llm.EventTextDelta, Delta: "rally hooks test.", Partial: answer}
		return session.MessageUpdateEvent{Message: answer, Assistant: delta}, true
	case session.ToolExecutionStart:
		return session.ToolExecutionStartEvent{ToolCallID: id, ToolName: bash, Args: args}, true
	case session.ToolExecutionUpdate:
		return session.ToolExecutionUpdateEvent{ToolCallID: id, ToolName: bash, Args: args, PartialResult: out}, true
	case session.ToolExecutionEnd:
		return session.ToolExecutionEndEvent{ToolCallID: id, ToolName: bash, Result: out}, true
	case session.CompactionStart:
		return session.CompactionStartEvent{Reason: session.ReasonOverflow}, true
	case session.CompactionEnd:
		return session.CompactionEndEvent{Reason: session.ReasonOverflow, WillRetry: true,
			Result: &session.CompactionResult{Summary: "## Goal\nA sample summary.", TokensBefore: 120000}}, true
	case session.AutoRetryStart:
		return session.AutoRetryStartEvent{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: errMsg, ErrorClass: retry.Transient}, true
	case session.AutoRetryEnd:
		return session.AutoRetryEndEvent{Attempt: 3, FinalError: errMsg}, true
	case session.StreamResumed:
		return session.StreamResumedEvent{Attempt: 1, Cursor: "41", GapMs: 2003}, true
	case session.SessionError:
		return session.SessionErrorEvent{Op: session.OpSaveMessage, ErrorMessage: "journal: append to /home/me/.rally/sessions/sample.jsonl: no space left on device"}, true
	}
	// A kind without a sample of its own is tested with its zero value.
	return session.ZeroEvent(session.EventType(name))
}
