package tui

import (
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// This file is the only place that knows the session's event type. It
// turns each session event into one of the UI's own messages (msgs.go), so
// the model and its tests never depend on the event's shape.

// translate returns the UI message for e, or nil for events the UI does
// not show. now is when the event arrived; the retry countdown counts from
// it. A kind it does not know (a new one) becomes changedMsg: the status
// line re-reads the session's state, so an event whose facts are in State
// needs nothing here.
func translate(e session.Event, now time.Time) any {
	switch e := e.(type) {
	case session.AgentEndEvent, session.TurnStartEvent, session.TurnEndEvent, session.ToolExecutionUpdateEvent:
		// Nothing the UI shows, and tool updates come too often to
		// re-read the state on each.
		return nil
	case session.AgentStartEvent:
		return runStartMsg{}
	case session.AgentSettledEvent:
		return settledMsg{err: e.Err}
	case session.MessageStartEvent:
		if e.Message != nil && e.Message.Role == llm.Assistant {
			return assistantStartMsg{}
		}
	case session.MessageUpdateEvent:
		if e.Assistant == nil {
			return nil
		}
		switch e.Assistant.Type {
		case llm.EventTextDelta:
			return deltaMsg{text: e.Assistant.Delta}
		case llm.EventThinkingDelta:
			return deltaMsg{text: e.Assistant.Delta, thinking: true}
		}
	case session.MessageEndEvent:
		if e.Message == nil {
			return nil
		}
		return messageEndMsg{msg: *e.Message}
	case session.MessageDiscardedEvent:
		return discardMsg{}
	case session.ToolExecutionStartEvent:
		return toolStartMsg{id: e.ToolCallID, name: e.ToolName, args: string(e.Args)}
	case session.ToolExecutionEndEvent:
		var text string
		if e.Result != nil {
			text = resultText(e.Result.Content)
		}
		return toolEndMsg{id: e.ToolCallID, name: e.ToolName, result: text, isError: e.IsError}
	case session.RetryWaitingEvent, session.RetryHeartbeatEvent:
		return translateWait(e)
	case session.AutoRetryStartEvent:
		return retryStartMsg{
			attempt: e.Attempt, max: e.MaxAttempts,
			at: now, until: now.Add(time.Duration(e.DelayMs) * time.Millisecond),
			err:   e.ErrorMessage,
			class: e.ErrorClass.String(), switchedTo: e.SwitchedTo,
		}
	case session.AutoRetryEndEvent:
		return retryEndMsg{success: e.Success, attempt: e.Attempt, finalError: e.FinalError,
			cancelled: !e.Success && e.FinalError == session.RetryCancelled}
	case session.StreamResumedEvent:
		return resumedMsg{attempt: e.Attempt}
	case session.SessionErrorEvent:
		return storeErrorMsg{op: e.Op, err: e.ErrorMessage}
	case session.CompactionStartEvent:
		return compactStartMsg{reason: string(e.Reason)}
	case session.CompactionEndEvent:
		m := compactEndMsg{reason: string(e.Reason), aborted: e.Aborted}
		if r := e.Result; r != nil {
			m.tokensBefore, m.done = r.TokensBefore, true
		}
		return m
	default:
		return changedMsg{}
	}
	return nil
}

// resultText is the text of a tool result's content blocks.
func resultText(cs []llm.Content) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Type {
		case llm.TextType:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		case llm.ImageType:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("[image " + c.MimeType + "]")
		}
	}
	return b.String()
}
