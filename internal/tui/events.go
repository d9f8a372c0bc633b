package tui

import (
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// This file is the only place that knows the session's event type. It
// turns each session event into one of the UI's own messages (msgs.go), so
// the model and its tests never depend on the event's shape. The switch is
// on the wire names (DESIGN §6.2), which stay fixed whatever Go type
// carries them.

// translate returns the UI message for e, or nil for events the UI does
// not show. now is when the event arrived; the retry countdown counts from
// it.
func translate(e session.Event, now time.Time) any {
	switch string(e.Type) {
	case "agent_start":
		return runStartMsg{}
	case "agent_settled":
		return settledMsg{}
	case "message_start":
		if e.Message != nil && e.Message.Role == llm.Assistant {
			return assistantStartMsg{}
		}
	case "message_update":
		if e.Assistant == nil {
			return nil
		}
		switch e.Assistant.Type {
		case llm.EventTextDelta:
			return deltaMsg{text: e.Assistant.Delta}
		case llm.EventThinkingDelta:
			return deltaMsg{text: e.Assistant.Delta, thinking: true}
		}
	case "message_end":
		if e.Message == nil {
			return nil
		}
		return messageEndMsg{msg: *e.Message}
	case "message_discarded":
		return discardMsg{}
	case "tool_execution_start":
		return toolStartMsg{id: e.ToolCallID, name: e.ToolName, args: string(e.Args)}
	case "tool_execution_end":
		var text string
		if e.Result != nil {
			text = resultText(e.Result.Content)
		}
		return toolEndMsg{id: e.ToolCallID, name: e.ToolName, result: text, isError: e.IsError}
	case "auto_retry_start":
		return retryStartMsg{
			attempt: e.Attempt, max: e.MaxAttempts,
			at: now, until: now.Add(time.Duration(e.DelayMs) * time.Millisecond),
			err:   e.ErrorMessage,
			class: e.ErrorClass, switchedTo: e.SwitchedTo,
		}
	case "auto_retry_end":
		return retryEndMsg{success: e.Success, attempt: e.Attempt, finalError: e.FinalError,
			cancelled: !e.Success && e.FinalError == session.RetryCancelled}
	case "compaction_start":
		return compactStartMsg{reason: e.Reason}
	case "compaction_end":
		m := compactEndMsg{reason: e.Reason, aborted: e.Aborted}
		if r, ok := e.Compaction.(*session.CompactionResult); ok && r != nil {
			m.tokensBefore, m.done = r.TokensBefore, true
		}
		return m
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
