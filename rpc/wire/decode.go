package wire

import (
	"encoding/json"
	"fmt"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// eventWire is every field an event can carry on the wire. "result" is a
// tool result in tool_execution_end and a compaction result in
// compaction_end, so it is kept raw until the type is known.
type eventWire struct {
	Type          session.EventType        `json:"type"`
	Message       *llm.Message             `json:"message"`
	Assistant     *streamWire              `json:"assistantMessageEvent"`
	Messages      []llm.Message            `json:"messages"`
	ToolResults   []llm.Message            `json:"toolResults"`
	ToolCallID    string                   `json:"toolCallId"`
	ToolName      string                   `json:"toolName"`
	Args          json.RawMessage          `json:"args"`
	Result        json.RawMessage          `json:"result"`
	PartialResult json.RawMessage          `json:"partialResult"`
	IsError       bool                     `json:"isError"`
	WillRetry     bool                     `json:"willRetry"`
	Attempt       int                      `json:"attempt"`
	MaxAttempts   int                      `json:"maxAttempts"`
	DelayMs       int64                    `json:"delayMs"`
	ErrorMessage  string                   `json:"errorMessage"`
	ErrorClass    string                   `json:"errorClass"`
	SwitchedTo    string                   `json:"switchedTo"`
	Success       bool                     `json:"success"`
	FinalError    string                   `json:"finalError"`
	Reason        session.CompactionReason `json:"reason"`
	Aborted       bool                     `json:"aborted"`
	Error         string                   `json:"error"` // session_error
	Op            string                   `json:"op"`
}

// streamWire is llm.Event without its partial: the wire repeats the
// message there, so decoding it twice would only cost time and memory.
type streamWire struct {
	Type         llm.EventType  `json:"type"`
	ContentIndex int            `json:"contentIndex"`
	Delta        string         `json:"delta"`
	Content      string         `json:"content"`
	ToolCall     *llm.Content   `json:"toolCall"`
	Reason       llm.StopReason `json:"reason"`
}

type resultWire struct {
	Content []llm.Content `json:"content"`
	IsError bool          `json:"isError"`
}

// DecodeEvent reads one event line in its wire shape, as a client of the
// RPC or JSON output sees it. A message_update's partial is its message (one
// value, not a second copy).
func DecodeEvent(b []byte) (session.Event, error) {
	var w eventWire
	if err := json.Unmarshal(b, &w); err != nil {
		return session.Event{}, fmt.Errorf("wire: decode event: %w", err)
	}
	e := session.Event{
		Type: w.Type, Message: w.Message, Messages: w.Messages, ToolResults: w.ToolResults,
		ToolCallID: w.ToolCallID, ToolName: w.ToolName, Args: w.Args, IsError: w.IsError,
		WillRetry: w.WillRetry, Attempt: w.Attempt, MaxAttempts: w.MaxAttempts, DelayMs: w.DelayMs,
		ErrorMessage: w.ErrorMessage, SwitchedTo: w.SwitchedTo,
		Success: w.Success, FinalError: w.FinalError, Reason: w.Reason, Aborted: w.Aborted, Op: w.Op,
	}
	if w.Type == session.SessionError {
		e.ErrorMessage = w.Error
	}
	if a := w.Assistant; a != nil {
		e.Assistant = &llm.Event{Type: a.Type, ContentIndex: a.ContentIndex, Delta: a.Delta, Content: a.Content,
			ToolCall: a.ToolCall, Reason: a.Reason, Partial: w.Message}
	}
	var err error
	switch w.Type {
	case session.ToolExecutionEnd:
		e.Result, err = decodeResult(w.Result)
	case session.ToolExecutionUpdate:
		e.Result, err = decodeResult(w.PartialResult)
	case session.CompactionEnd:
		if len(w.Result) > 0 && string(w.Result) != "null" {
			e.Compaction = new(session.CompactionResult)
			err = json.Unmarshal(w.Result, e.Compaction)
		}
	case session.AutoRetryStart:
		var c retry.Class
		if err = c.UnmarshalText([]byte(w.ErrorClass)); err == nil {
			e.ErrorClass = c
		}
	}
	if err != nil {
		return session.Event{}, fmt.Errorf("wire: decode %s: %w", w.Type, err)
	}
	return e, nil
}

func decodeResult(raw json.RawMessage) (*tool.Result, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var r resultWire
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &tool.Result{Content: r.Content, IsError: r.IsError}, nil
}
