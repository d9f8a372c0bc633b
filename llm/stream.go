package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Stream is one streaming model response. Next returns its events in order
// and io.EOF after the final done or error event. The provider's parser runs
// on the caller's goroutine, pulled by Next: no goroutine, no channel, and
// cancellation is the request context's.
type Stream struct {
	fill  func(*Builder) error
	close func() error
	b     Builder
	pos   int
	ended bool
	// resume, when set, is asked about a failure the provider can
	// continue (OnDrop).
	resume Resumer
	// waits is the provider's promise to call a hook before each read
	// (Waits); nil for a stream with nothing to wait for.
	waits *WaitHook
}

// WaitHook is how a stream read from a connection tells its consumer that
// it is about to wait for more of the response (Stream.OnWait). The
// provider makes one, calls Wait before every read of the response body,
// and passes it to Stream.Waits.
type WaitHook struct{ fn func() }

// Wait calls the consumer's hook, if it set one.
func (h *WaitHook) Wait() {
	if h != nil && h.fn != nil {
		h.fn()
	}
}

// Waits records that s calls h.Wait before each read of its response,
// for OnWait; it returns s.
func (s *Stream) Waits(h *WaitHook) *Stream {
	s.waits = h
	return s
}

// OnWait asks s to call fn, on the goroutine calling Next, each time it is
// about to wait for more of the response (a read from the connection, a
// reconnect), and reports whether it will: a stream with nothing to wait
// for (the embedded model) never does. Every event before such a call has
// been returned by Next. A consumer that batches per event (waking a
// goroutine, flushing a write) can leave the batch to fn: whatever a read
// brought is then handled once, and nothing ready waits on the network.
func (s *Stream) OnWait(fn func()) bool {
	if s.waits == nil {
		return false
	}
	s.waits.fn = fn
	return true
}

// NewStream returns a stream whose events are produced by fill, which reads
// more of the response and reports it through the Builder. fill returns
// io.EOF when the response ended cleanly (then the stream must have
// finished: a response that ends without its terminal event is a truncated
// stream), or any other error for a failure. close releases the response.
func NewStream(msg Message, fill func(*Builder) error, close func() error) *Stream {
	s := &Stream{fill: fill, close: close}
	s.b.msg = msg
	if s.b.msg.Content == nil {
		s.b.msg.Content = []Content{}
	}
	s.b.emit(Event{Type: EventStart})
	return s
}

// Next returns the next event, or io.EOF when the stream is over.
func (s *Stream) Next() (Event, error) {
	for s.pos >= len(s.b.queue) {
		if s.ended {
			return Event{}, io.EOF
		}
		s.b.queue = s.b.queue[:0]
		s.pos = 0
		err := s.fill(&s.b)
		switch {
		case s.b.done:
			s.ended = true
		case err != nil && err != io.EOF && s.waitResumed(err):
			// Reconnected: the next fill reads the continuation.
		case err == io.EOF:
			s.b.Fail(Truncated(s.b.msg.Provider))
			s.ended = true
		case err != nil:
			s.b.Fail(err)
			s.ended = true
		}
	}
	e := s.b.queue[s.pos]
	s.pos++
	return e, nil
}

// Message returns the message assembled so far; after the final event it is
// the complete assistant message.
func (s *Stream) Message() *Message { return &s.b.msg }

// Close releases the response. It is safe to call more than once.
func (s *Stream) Close() error {
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// Collect reads s to its end and returns the final message; the error is
// the stream's failure, if any.
func Collect(s *Stream) (*Message, error) {
	defer s.Close()
	var failure error
	for {
		e, err := s.Next()
		if err == io.EOF {
			return s.Message(), failure
		}
		if e.Type == EventError {
			failure = e.Err
		}
	}
}

// Truncated is the error of provider's stream that ended without its
// terminal event.
func Truncated(provider string) *APIError {
	return &APIError{Provider: provider, Message: "stream ended without its final event", MidStream: true, Err: ErrTruncated}
}

// ErrTruncated is wrapped by the error of a stream that ended without its
// terminal event. It wraps io.ErrUnexpectedEOF, so the retry policy
// classifies it as transient by type.
var ErrTruncated = fmt.Errorf("truncated stream: %w", io.ErrUnexpectedEOF)

// Builder assembles an assistant message from a provider's deltas and
// queues the matching events. Provider parsers call it; blocks are keyed by
// the provider's own block index or tool-call index.
type Builder struct {
	msg   Message
	queue []Event
	// open maps a provider key to the content index of an open block.
	open map[string]int
	// args collects streamed tool-call arguments, by content index.
	args map[int][]byte
	// texts holds the text or thinking of open blocks, by content index,
	// so a delta appends in amortised constant time instead of copying
	// the whole text (quadratic over a long answer).
	texts map[int]*strings.Builder
	// out counts the bytes of text, thinking and tool-call arguments
	// streamed so far (OutputBytes).
	out  int
	done bool
}

func (b *Builder) emit(e Event) {
	e.Partial = &b.msg
	b.queue = append(b.queue, e)
}

// Message returns the message being built.
func (b *Builder) Message() *Message { return &b.msg }

// block returns the content index for key, starting a block of typ if none
// is open under that key.
func (b *Builder) block(key, typ string) (int, bool) {
	if i, ok := b.open[key]; ok && b.msg.Content[i].Type == typ {
		return i, false
	}
	if b.open == nil {
		b.open = map[string]int{}
	}
	if i, ok := b.open[key]; ok {
		// The provider reused a key for a new kind of block: end the old one.
		b.end(key, i)
	}
	b.msg.Content = append(b.msg.Content, Content{Type: typ})
	i := len(b.msg.Content) - 1
	b.open[key] = i
	return i, true
}

// Text appends a text fragment to the text block under key. Text and
// Thinking keep no reference to delta (the event's Delta is the tail of
// the block's text, which holds a copy), so a parser may pass a view of a
// buffer it reuses, and a streamed delta costs no allocation of its own.
func (b *Builder) Text(key, delta string) {
	i, started := b.block(key, TextType)
	if started {
		b.emit(Event{Type: EventTextStart, ContentIndex: i})
	}
	if delta == "" {
		return
	}
	b.out += len(delta)
	text := b.grow(i, b.msg.Content[i].Text, delta)
	b.msg.Content[i].Text = text
	b.emit(Event{Type: EventTextDelta, ContentIndex: i, Delta: text[len(text)-len(delta):]})
}

// Thinking appends a reasoning fragment to the thinking block under key
// (keeping no reference to delta, as Text).
func (b *Builder) Thinking(key, delta string) {
	i, started := b.block(key, ThinkingType)
	if started {
		b.emit(Event{Type: EventThinkingStart, ContentIndex: i})
	}
	if delta == "" {
		return
	}
	b.out += len(delta)
	thinking := b.grow(i, b.msg.Content[i].Thinking, delta)
	b.msg.Content[i].Thinking = thinking
	b.emit(Event{Type: EventThinkingDelta, ContentIndex: i, Delta: thinking[len(thinking)-len(delta):]})
}

// grow returns s, the text of block i, with delta appended. The result
// shares the block's buffer: earlier results stay valid, as a
// strings.Builder never changes bytes it has handed out.
func (b *Builder) grow(i int, s, delta string) string {
	sb := b.texts[i]
	if sb == nil || sb.Len() != len(s) {
		if b.texts == nil {
			b.texts = map[int]*strings.Builder{}
		}
		sb = &strings.Builder{}
		sb.WriteString(s)
		b.texts[i] = sb
	}
	sb.WriteString(delta)
	return sb.String()
}

// Signature records the provider's signature of the thinking block under key.
func (b *Builder) Signature(key, sig string) {
	i, started := b.block(key, ThinkingType)
	if started {
		b.emit(Event{Type: EventThinkingStart, ContentIndex: i})
	}
	b.msg.Content[i].ThinkingSignature += sig
}

// ToolCall adds to the tool call under key: its id and name when first
// known, and a fragment of its JSON arguments.
func (b *Builder) ToolCall(key, id, name, argsDelta string) {
	i, started := b.block(key, ToolCallType)
	c := &b.msg.Content[i]
	if id != "" && c.ID == "" {
		c.ID = id
	}
	if name != "" && c.Name == "" {
		c.Name = name
	}
	if started {
		b.emit(Event{Type: EventToolCallStart, ContentIndex: i})
	}
	if argsDelta == "" {
		return
	}
	if b.args == nil {
		b.args = map[int][]byte{}
	}
	b.out += len(argsDelta)
	b.args[i] = append(b.args[i], argsDelta...)
	b.emit(Event{Type: EventToolCallDelta, ContentIndex: i, Delta: argsDelta})
}

// End ends the block under key, if one is open.
func (b *Builder) End(key string) {
	if i, ok := b.open[key]; ok {
		b.end(key, i)
	}
}

func (b *Builder) end(key string, i int) {
	delete(b.open, key)
	delete(b.texts, i)
	c := &b.msg.Content[i]
	switch c.Type {
	case TextType:
		b.emit(Event{Type: EventTextEnd, ContentIndex: i, Content: c.Text})
	case ThinkingType:
		b.emit(Event{Type: EventThinkingEnd, ContentIndex: i, Content: c.Thinking})
	case ToolCallType:
		c.Arguments = toolArgs(b.args[i])
		delete(b.args, i)
		tc := *c
		b.emit(Event{Type: EventToolCallEnd, ContentIndex: i, ToolCall: &tc})
	}
}

// toolArgs turns streamed argument text into a call's Arguments. Nothing
// (or null) is no arguments, {}. Text that is not a JSON object (cut
// short, garbage, an array) is kept whole as a JSON string, rather than
// the stream failing or the call running with {}: the session file keeps
// what the model sent, and the agent answers the call with an error
// instead of running it (agent.checkArgs).
func toolArgs(raw []byte) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		text, _ := json.Marshal(string(raw))
		return text
	}
	return json.RawMessage(raw)
}

// SetToolArgs sets a tool call's complete arguments at once, for providers
// that send them whole (Gemini).
func (b *Builder) SetToolArgs(key string, args json.RawMessage) {
	if i, ok := b.open[key]; ok {
		if b.args == nil {
			b.args = map[int][]byte{}
		}
		b.out += len(args) - len(b.args[i])
		b.args[i] = append(b.args[i][:0], args...)
		b.emit(Event{Type: EventToolCallDelta, ContentIndex: i, Delta: string(args)})
	}
}

// Usage records the provider's token counts; later calls override earlier
// ones (the last usage seen is final).
func (b *Builder) Usage(u Usage) {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	b.msg.Usage = &u
}

func (b *Builder) endAll() {
	// End open blocks in content order, so events read naturally.
	for len(b.open) > 0 {
		first, key := -1, ""
		for k, i := range b.open {
			if first < 0 || i < first {
				first, key = i, k
			}
		}
		b.end(key, first)
	}
}

// Finish ends the message with the given stop reason. A stream that
// finished with tool calls stops with ToolUse whatever the provider said.
func (b *Builder) Finish(reason StopReason) {
	if b.done {
		return
	}
	b.endAll()
	if reason == "" || reason == Stop {
		if len(b.msg.ToolCalls()) > 0 {
			reason = ToolUse
		} else {
			reason = Stop
		}
	}
	b.msg.StopReason = reason
	b.done = true
	b.emit(Event{Type: EventDone, Reason: reason})
}

// Fail ends the message with an error. A cancelled context makes the stop
// reason Aborted rather than Error.
func (b *Builder) Fail(err error) {
	if b.done {
		return
	}
	b.endAll()
	reason := Error
	if errors.Is(err, context.Canceled) {
		reason = Aborted
	}
	b.msg.StopReason = reason
	b.msg.ErrorMessage = err.Error()
	b.done = true
	b.emit(Event{Type: EventError, Reason: reason, Err: err})
}

// OutputBytes is how many bytes of text, thinking and tool-call arguments
// the message has received so far: what a client-side cap on the output
// counts, in constant time.
func (b *Builder) OutputBytes() int { return b.out }

// Done reports whether the message has finished.
func (b *Builder) Done() bool { return b.done }

// Now returns the current time as Unix milliseconds, the timestamp unit of
// messages.
func Now() int64 { return time.Now().UnixMilli() }

// key formats an integer block index as a Builder key.
func Key(i int) string { return strconv.Itoa(i) }
