// Package llm holds what every provider shares: messages and content
// blocks, usage and cost, the stream events of a model call, the Provider
// interface, *APIError, and the model catalog. The JSON shapes are those of
// the pi coding agent's sessions and RPC protocol (docs/rpc.md), so its
// tools read rally's files.
package llm

import (
	"encoding/json"
	"errors"
)

// Role says who wrote a message.
type Role string

const (
	User       Role = "user"
	Assistant  Role = "assistant"
	ToolResult Role = "toolResult"
)

// StopReason says why an assistant message ended.
type StopReason string

const (
	Stop    StopReason = "stop"
	Length  StopReason = "length"
	ToolUse StopReason = "toolUse"
	Error   StopReason = "error"
	Aborted StopReason = "aborted"
)

// Content types.
const (
	TextType     = "text"
	ThinkingType = "thinking"
	ImageType    = "image"
	ToolCallType = "toolCall"
)

// Content is one block of a message: text, thinking, an image, or a tool
// call, told apart by Type. Only the fields of its type are set.
type Content struct {
	Type string `json:"type"`
	// Text is set for "text".
	Text string `json:"text,omitempty"`
	// Thinking and its provider signature are set for "thinking".
	Thinking          string `json:"thinking,omitempty"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	// Data (base64) and MimeType are set for "image".
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// ID, Name and Arguments (a JSON object) are set for "toolCall". When
	// the model's arguments were not a JSON object (cut short, garbage),
	// Arguments is a JSON string holding them as they came: the call is
	// kept, answered with an error and never run.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ThoughtSignature is Gemini's opaque signature of a "toolCall", which
	// must be sent back with the call (as in pi's sessions).
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: TextType, Text: s} }

// Cost is money in US dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Usage counts the tokens of one model call, as the provider reported them.
type Usage struct {
	Input       int  `json:"input"`
	Output      int  `json:"output"`
	CacheRead   int  `json:"cacheRead"`
	CacheWrite  int  `json:"cacheWrite"`
	TotalTokens int  `json:"totalTokens"`
	Cost        Cost `json:"cost"`
}

// Message is a user message, an assistant message or a tool result, told
// apart by Role. Only the fields of its role are set.
type Message struct {
	Role    Role      `json:"role"`
	Content []Content `json:"content"`

	// Assistant messages.
	API          string     `json:"api,omitempty"`
	Provider     string     `json:"provider,omitempty"`
	Model        string     `json:"model,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	StopReason   StopReason `json:"stopReason,omitempty"`
	ErrorMessage string     `json:"errorMessage,omitempty"`

	// Tool results.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`

	// Timestamp is Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
}

// UnmarshalJSON accepts a user message's content given as a bare string, as
// the reference protocol allows.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	m.Content = nil
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	if raw.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(raw.Content, &s); err != nil {
			return err
		}
		m.Content = []Content{Text(s)}
		return nil
	}
	if err := json.Unmarshal(raw.Content, &m.Content); err != nil {
		return errors.New("llm: message content: want a string or an array of content blocks")
	}
	return nil
}

// MarshalJSON writes a tool result's isError even when false, as the
// reference protocol does, and never writes a nil content as null.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if m.Content == nil {
		m.Content = []Content{}
	}
	if m.Role == ToolResult {
		return json.Marshal(struct {
			plain
			IsError bool `json:"isError"`
		}{plain(m), m.IsError})
	}
	return json.Marshal(plain(m))
}

// TextOf returns the concatenated text blocks of a message.
func (m *Message) TextOf() string {
	var n, blocks int
	var one string
	for _, c := range m.Content {
		if c.Type == TextType {
			n += len(c.Text)
			blocks++
			one = c.Text
		}
	}
	if blocks <= 1 {
		return one // no copy: every request converts the whole context
	}
	b := make([]byte, 0, n)
	for _, c := range m.Content {
		if c.Type == TextType {
			b = append(b, c.Text...)
		}
	}
	return string(b)
}

// ToolCalls returns the tool-call blocks of a message.
func (m *Message) ToolCalls() []Content {
	var calls []Content
	for _, c := range m.Content {
		if c.Type == ToolCallType {
			calls = append(calls, c)
		}
	}
	return calls
}
