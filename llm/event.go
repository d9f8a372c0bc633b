package llm

// EventType names a stream event (message_update's assistantMessageEvent
// in docs/rpc.md).
type EventType string

const (
	EventStart         EventType = "start"
	EventTextStart     EventType = "text_start"
	EventTextDelta     EventType = "text_delta"
	EventTextEnd       EventType = "text_end"
	EventThinkingStart EventType = "thinking_start"
	EventThinkingDelta EventType = "thinking_delta"
	EventThinkingEnd   EventType = "thinking_end"
	EventToolCallStart EventType = "toolcall_start"
	EventToolCallDelta EventType = "toolcall_delta"
	EventToolCallEnd   EventType = "toolcall_end"
	EventDone          EventType = "done"
	EventError         EventType = "error"
)

// Event is one step of a streaming model response.
type Event struct {
	Type EventType `json:"type"`
	// ContentIndex is the index in Partial.Content of the block concerned.
	ContentIndex int `json:"contentIndex"`
	// Delta is the new text, thinking or argument fragment (…_delta).
	Delta string `json:"delta,omitempty"`
	// Content is the whole text or thinking of an ended block (…_end).
	Content string `json:"content,omitempty"`
	// ToolCall is the finished call (toolcall_end).
	ToolCall *Content `json:"toolCall,omitempty"`
	// Reason is the stop reason (done, error).
	Reason StopReason `json:"reason,omitempty"`
	// Partial is the message so far. It is the stream's live message:
	// copy it (Clone) to keep it past the next call to Next.
	Partial *Message `json:"partial,omitempty"`
	// Err is the failure (error events only).
	Err error `json:"-"`
}

// Clone returns a deep copy of m, safe to keep while the stream goes on.
func (m *Message) Clone() *Message {
	if m == nil {
		return nil
	}
	c := *m
	c.Content = make([]Content, len(m.Content))
	copy(c.Content, m.Content)
	if m.Usage != nil {
		u := *m.Usage
		c.Usage = &u
	}
	return &c
}
