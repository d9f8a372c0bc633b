package wire

import (
	"strconv"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Encoder writes the lines of one event stream, one event after another,
// reusing its buffer and what it escaped for the previous line.
//
// In the default form (Deltas false, pi's) a message_update carries the
// whole partial message twice, so a line costs O(answer so far) and a
// stream of n deltas O(n²) bytes; the Encoder keeps each text and
// thinking block's escaped form from the previous line and escapes only
// what was appended since, so what is left per line is copying bytes the
// protocol demands. With Deltas a message_update carries only its stream
// event's type, contentIndex and delta (a toolcall_start also the call's
// id and name, a toolcall_end the finished call), never the message: O(1)
// per delta and O(n) per answer. The message is on message_start and
// message_end either way.
//
// The zero Encoder writes the default form. An Encoder is not safe for
// concurrent use.
type Encoder struct {
	// Deltas selects the delta-only form of message_update.
	Deltas bool
	buf    []byte
	tc     textCache
}

// Encode returns the event's line (no newline). The bytes are valid until
// the next call.
func (enc *Encoder) Encode(e session.Event) []byte {
	switch u := e.(type) {
	case session.MessageUpdateEvent:
		if enc.Deltas {
			enc.buf = appendDelta(enc.buf[:0], u)
		} else {
			enc.buf = appendEvent(enc.buf[:0], e, &enc.tc)
		}
		return enc.buf
	case session.MessageEndEvent, session.MessageDiscardedEvent:
		enc.tc = textCache{} // the message is over: let its text go
	}
	enc.buf = appendEvent(enc.buf[:0], e, nil)
	return enc.buf
}

// appendDelta writes a message_update in the delta-only form.
func appendDelta(b []byte, e session.MessageUpdateEvent) []byte {
	b = append(b, `{"assistantMessageEvent":`...)
	a := e.Assistant
	if a == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"type":`...)
		b = appendString(b, string(a.Type))
		b = append(b, `,"contentIndex":`...)
		b = strconv.AppendInt(b, int64(a.ContentIndex), 10)
		b = optString(b, `,"delta":`, a.Delta)
		tc := a.ToolCall
		if tc == nil && a.Type == llm.EventToolCallStart && e.Message != nil && a.ContentIndex < len(e.Message.Content) {
			// The call's id and name are known at its start; its
			// arguments come as deltas.
			start := e.Message.Content[a.ContentIndex]
			tc = &llm.Content{Type: start.Type, ID: start.ID, Name: start.Name}
		}
		if tc != nil {
			b = append(b, `,"toolCall":`...)
			b = appendContent(b, tc, nil)
		}
		b = optString(b, `,"reason":`, string(a.Reason))
		b = append(b, '}')
	}
	return append(b, `,"type":"message_update"}`...)
}

// textCache is the escaped text of each block of the last partial message
// encoded, by content index.
type textCache struct{ blocks []cachedText }

// block returns the cache of block i, made on demand; nil for a nil cache.
func (tc *textCache) block(i int) *cachedText {
	if tc == nil {
		return nil
	}
	for len(tc.blocks) <= i {
		tc.blocks = append(tc.blocks, cachedText{})
	}
	return &tc.blocks[i]
}

// cachedText is src escaped (enc, without quotes). src always ends with a
// complete rune, so escaping src and then what follows it gives the bytes
// of escaping the whole.
type cachedText struct {
	src string
	enc []byte
}

// opt writes `key"s"` for a non-empty s, from the cache when s extends
// what it holds (a streamed block grows by appending), and updates it.
func (ct *cachedText) opt(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	if ct == nil {
		return optString(b, key, s)
	}
	// A string compare of equal pointers is free, and a block's texts
	// share one buffer (llm.Builder), so this is mostly a length check.
	if len(s) < len(ct.src) || s[:len(ct.src)] != ct.src {
		ct.src, ct.enc = "", ct.enc[:0]
	}
	rest := s[len(ct.src):]
	if r, size := utf8.DecodeLastRuneInString(rest); r != utf8.RuneError || size > 1 {
		ct.enc = appendEscaped(ct.enc, rest)
		ct.src, rest = s, ""
	}
	b = append(b, key...)
	b = append(b, '"')
	b = append(b, ct.enc...)
	b = appendEscaped(b, rest)
	return append(b, '"')
}
