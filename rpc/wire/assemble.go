package wire

import (
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Decoder reads the lines of one event stream in either form of
// message_update (see Encoder). From the delta-only form it rebuilds the
// partial message out of message_start and the deltas, so every
// message_update it returns carries its Message (also as the stream
// event's Partial) as in the default form, and a text_end or
// thinking_end its Content. Each message is a snapshot the caller may
// keep; rebuilding costs O(blocks) per delta, not O(text).
//
// The zero Decoder is ready to use. A Decoder is not safe for concurrent
// use.
type Decoder struct {
	msg   *llm.Message       // the message being streamed
	texts []*strings.Builder // the text or thinking of msg's blocks
}

// Decode reads one line.
func (d *Decoder) Decode(line []byte) (session.Event, error) {
	e, err := DecodeEvent(line)
	if err != nil {
		return e, err
	}
	switch u := e.(type) {
	case session.MessageStartEvent:
		d.msg, d.texts = u.Message.Clone(), d.texts[:0]
	case session.MessageEndEvent, session.MessageDiscardedEvent:
		d.msg, d.texts = nil, d.texts[:0]
	case session.MessageUpdateEvent:
		if u.Message == nil && u.Assistant != nil {
			d.apply(u.Assistant)
			u.Message = d.msg.Clone()
			u.Assistant.Partial = u.Message
			return u, nil
		}
	}
	return e, nil
}

// apply adds one delta-only stream event to the message being streamed.
func (d *Decoder) apply(a *llm.Event) {
	if d.msg == nil { // joined mid-stream
		d.msg = &llm.Message{Role: llm.Assistant, Content: []llm.Content{}}
	}
	i := a.ContentIndex
	if i < 0 || i > len(d.msg.Content) { // not a stream rally writes
		return
	}
	switch a.Type {
	case llm.EventTextStart:
		d.start(i, llm.Content{Type: llm.TextType})
	case llm.EventThinkingStart:
		d.start(i, llm.Content{Type: llm.ThinkingType})
	case llm.EventToolCallStart:
		c := llm.Content{Type: llm.ToolCallType}
		if a.ToolCall != nil {
			c.ID, c.Name = a.ToolCall.ID, a.ToolCall.Name
		}
		d.start(i, c)
		a.ToolCall = nil // the default form has none at the start
	}
	if i == len(d.msg.Content) {
		return // a delta for a block that never started
	}
	c := &d.msg.Content[i]
	switch a.Type {
	case llm.EventTextDelta:
		c.Text = d.grow(i, c.Text, a.Delta)
	case llm.EventThinkingDelta:
		c.Thinking = d.grow(i, c.Thinking, a.Delta)
	case llm.EventTextEnd:
		a.Content = c.Text
	case llm.EventThinkingEnd:
		a.Content = c.Thinking
	case llm.EventToolCallEnd:
		if a.ToolCall != nil {
			*c = *a.ToolCall
		}
	}
}

// start opens block i (the next one, or a restart of it).
func (d *Decoder) start(i int, c llm.Content) {
	for len(d.texts) <= i {
		d.texts = append(d.texts, nil)
	}
	d.texts[i] = nil
	if i == len(d.msg.Content) {
		d.msg.Content = append(d.msg.Content, c)
	} else {
		d.msg.Content[i] = c
	}
}

// grow returns s, block i's text, with delta appended, in amortised
// constant time. Strings returned earlier stay valid: a strings.Builder
// never changes bytes it has handed out.
func (d *Decoder) grow(i int, s, delta string) string {
	for len(d.texts) <= i {
		d.texts = append(d.texts, nil)
	}
	sb := d.texts[i]
	if sb == nil || sb.Len() != len(s) {
		sb = &strings.Builder{}
		sb.WriteString(s)
		d.texts[i] = sb
	}
	sb.WriteString(delta)
	return sb.String()
}
