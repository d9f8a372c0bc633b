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
func typeOf(e Event) string { return string(e.Type) }

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
	if !Known(name) {
		return Event{}, false
	}
	const errMsg = `529 overloaded_error: Overloaded`
	e = Event{Type: session.EventType(name)}
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
	switch e.Type {
	case session.AgentEnd:
		e.Messages = []llm.Message{*answer}
	case session.TurnEnd:
		e.Message, e.ToolResults = answer, []llm.Message{}
	case session.MessageStart, session.MessageEnd, session.MessageDiscarded:
		e.Message = answer
	case session.MessageUpdate:
		delta := &llm.Event{Type: llm.EventTextDelta, Delta: "rally hooks test.", Partial: answer}
		e.Message, e.Assistant = answer, delta
	case session.ToolExecutionStart, session.ToolExecutionUpdate, session.ToolExecutionEnd:
		e.ToolCallID, e.ToolName, e.Args = "call_sample", "bash", args
		if e.Type != session.ToolExecutionStart {
			e.Result = &tool.Result{Content: []llm.Content{llm.Text("hello\n")}}
		}
	case session.CompactionStart:
		e.Reason = session.ReasonOverflow
	case session.CompactionEnd:
		e.Reason, e.WillRetry = session.ReasonOverflow, true
		e.Compaction = &session.CompactionResult{Summary: "## Goal\nA sample summary.", TokensBefore: 120000}
	case session.AutoRetryStart:
		e.Attempt, e.MaxAttempts, e.DelayMs = 1, 3, 2000
		e.ErrorMessage, e.ErrorClass = errMsg, retry.Transient
	case session.AutoRetryEnd:
		e.Attempt, e.FinalError = 3, errMsg
	case session.SessionError:
		e.Op, e.ErrorMessage = session.OpSaveMessage, "journal: append to /home/me/.rally/sessions/sample.jsonl: no space left on device"
	}
	return e, true
}
