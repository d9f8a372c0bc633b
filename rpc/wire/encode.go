// Package wire is the JSON form of session events: the lines of rally's
// RPC and JSON output modes, shaped as the pi coding agent's RPC protocol
// writes them (docs/rpc.md). AppendEvent writes one event line and
// DecodeEvent reads one back; the RPC server and client, the JSON output
// mode and hooks all use these two, so the wire shape exists once.
package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// The wire encoder. Events are the hot path of every JSON output (RPC mode
// writes one line per streamed delta, and message_update carries the whole
// partial message, twice, as the reference protocol does), so they are
// appended by hand instead of through reflection. Keys are written in
// sorted order, as json.Marshal of a map would, so the bytes are what the
// earlier map-based encoder produced. Strings are escaped as
// encoding/json does except that <, > and & are left alone (as JavaScript's
// JSON.stringify leaves them); U+2028 and U+2029 stay escaped so that line
// readers that split on them cannot break a line.

// AppendEvent appends the event's wire form (one JSON object, no newline)
// to b and returns the extended buffer.
func AppendEvent(b []byte, e session.Event) []byte { return appendEvent(b, e, nil) }

// appendEvent is AppendEvent; tc, when not nil, carries the escaped text of
// the previous message_update's partial over to this one. The kinds that
// carry messages are written by hand (a message is most of a stream's
// bytes); the rest, rare and small, through their JSON tags (appendTagged).
func appendEvent(b []byte, e session.Event, tc *textCache) []byte {
	b = append(b, '{')
	switch e := e.(type) {
	case session.MessageStartEvent:
		b = appendMessageField(b, e.Message)
	case session.MessageEndEvent:
		b = appendMessageField(b, e.Message)
	case session.MessageDiscardedEvent:
		b = appendMessageField(b, e.Message)
	case session.MessageUpdateEvent:
		b = append(b, `"assistantMessageEvent":`...)
		var ps, pe int
		b, ps, pe = appendStreamEvent(b, e.Assistant, tc)
		b = append(b, `,"message":`...)
		if ps < pe && e.Assistant.Partial == e.Message {
			// The partial is the message: copy its bytes instead of
			// encoding the growing message a second time.
			b = append(b, b[ps:pe]...)
		} else {
			b = appendMessage(b, e.Message, nil)
		}
	case session.AgentEndEvent:
		b = append(b, `"messages":`...)
		b = appendMessages(b, e.Messages)
		b = appendType(b, e)
		b = append(b, `,"willRetry":`...)
		b = strconv.AppendBool(b, e.WillRetry)
		return append(b, '}')
	case session.TurnEndEvent:
		b = append(b, `"message":`...)
		b = appendMessage(b, e.Message, nil)
		b = append(b, `,"toolResults":`...)
		b = appendMessages(b, e.ToolResults)
	case session.ToolExecutionStartEvent:
		b = append(b, `"args":`...)
		b = appendRaw(b, e.Args, "{}")
		b = appendToolIDs(b, e.ToolCallID, e.ToolName)
	case session.ToolExecutionUpdateEvent:
		b = append(b, `"args":`...)
		b = appendRaw(b, e.Args, "{}")
		b = append(b, `,"partialResult":`...)
		b = appendResult(b, e.PartialResult)
		b = appendToolIDs(b, e.ToolCallID, e.ToolName)
	case session.ToolExecutionEndEvent:
		b = append(b, `"isError":`...)
		b = strconv.AppendBool(b, e.IsError)
		b = append(b, `,"result":`...)
		b = appendResult(b, e.Result)
		b = appendToolIDs(b, e.ToolCallID, e.ToolName)
	case Unknown:
		if json.Valid(e.Line) {
			return appendRaw(b[:len(b)-1], e.Line, "")
		}
		b = append(b, `"type":`...)
		b = appendString(b, string(e.Type))
		return append(b, '}')
	default:
		return appendTagged(b[:len(b)-1], e)
	}
	b = appendType(b, e)
	return append(b, '}')
}

// appendType writes the "type" member, which sorts after every other key
// of an event but "willRetry".
func appendType(b []byte, e session.Event) []byte {
	b = append(b, `,"type":`...)
	return appendString(b, string(e.Kind()))
}

func appendMessageField(b []byte, m *llm.Message) []byte {
	b = append(b, `"message":`...)
	return appendMessage(b, m, nil)
}

// appendTagged writes an event through its JSON tags, with "type" added
// and the keys sorted as everywhere on the wire. It goes through a map, so
// it is for the small kinds only; a kind that cannot be encoded (a NaN in
// a field of its own) is written as its type alone rather than breaking
// the line.
func appendTagged(b []byte, e session.Event) []byte {
	kind := string(e.Kind())
	fields := map[string]any{}
	if raw, err := marshal(e); err == nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				fields[k] = v
			}
		}
	}
	fields["type"] = kind
	raw, err := marshal(fields)
	if err != nil {
		b = append(b, `{"type":`...)
		b = appendString(b, kind)
		return append(b, '}')
	}
	return append(b, raw...)
}

// marshal is json.Marshal without HTML escaping, as appendString writes
// strings (and JavaScript's JSON.stringify).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func appendToolIDs(b []byte, id, name string) []byte {
	b = append(b, `,"toolCallId":`...)
	b = appendString(b, id)
	b = append(b, `,"toolName":`...)
	return appendString(b, name)
}

func appendResult(b []byte, r *tool.Result) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"content":`...)
	b = appendContents(b, r.Content, nil)
	b = append(b, `,"isError":`...)
	b = strconv.AppendBool(b, r.IsError)
	return append(b, '}')
}

// appendStreamEvent writes an llm.Event as json.Marshal would; ps:pe are
// the bytes of its partial message (empty when it has none).
func appendStreamEvent(b []byte, e *llm.Event, tc *textCache) (out []byte, ps, pe int) {
	if e == nil {
		return append(b, "null"...), 0, 0
	}
	b = append(b, `{"type":`...)
	b = appendString(b, string(e.Type))
	b = append(b, `,"contentIndex":`...)
	b = strconv.AppendInt(b, int64(e.ContentIndex), 10)
	if e.Delta != "" {
		b = append(b, `,"delta":`...)
		b = appendString(b, e.Delta)
	}
	if e.Content != "" {
		b = append(b, `,"content":`...)
		b = appendString(b, e.Content)
	}
	if e.ToolCall != nil {
		b = append(b, `,"toolCall":`...)
		b = appendContent(b, e.ToolCall, nil)
	}
	if e.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, string(e.Reason))
	}
	if e.Partial != nil {
		b = append(b, `,"partial":`...)
		ps = len(b)
		b = appendMessage(b, e.Partial, tc)
		pe = len(b)
	}
	return append(b, '}'), ps, pe
}

func appendMessages(b []byte, ms []llm.Message) []byte {
	b = append(b, '[')
	for i := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, &ms[i], nil)
	}
	return append(b, ']')
}

// appendMessage writes a message exactly as llm.Message.MarshalJSON does;
// tc, when not nil, holds the escaped text of its blocks from the
// previous line.
func appendMessage(b []byte, m *llm.Message, tc *textCache) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"role":`...)
	b = appendString(b, string(m.Role))
	b = append(b, `,"content":`...)
	b = appendContents(b, m.Content, tc)
	b = optString(b, `,"api":`, m.API)
	b = optString(b, `,"provider":`, m.Provider)
	b = optString(b, `,"model":`, m.Model)
	if u := m.Usage; u != nil {
		b = append(b, `,"usage":{"input":`...)
		b = strconv.AppendInt(b, int64(u.Input), 10)
		b = append(b, `,"output":`...)
		b = strconv.AppendInt(b, int64(u.Output), 10)
		b = append(b, `,"cacheRead":`...)
		b = strconv.AppendInt(b, int64(u.CacheRead), 10)
		b = append(b, `,"cacheWrite":`...)
		b = strconv.AppendInt(b, int64(u.CacheWrite), 10)
		b = append(b, `,"totalTokens":`...)
		b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
		b = append(b, `,"cost":{"input":`...)
		b = appendFloat(b, u.Cost.Input)
		b = append(b, `,"output":`...)
		b = appendFloat(b, u.Cost.Output)
		b = append(b, `,"cacheRead":`...)
		b = appendFloat(b, u.Cost.CacheRead)
		b = append(b, `,"cacheWrite":`...)
		b = appendFloat(b, u.Cost.CacheWrite)
		b = append(b, `,"total":`...)
		b = appendFloat(b, u.Cost.Total)
		b = append(b, "}}"...)
	}
	b = optString(b, `,"stopReason":`, string(m.StopReason))
	b = optString(b, `,"errorMessage":`, m.ErrorMessage)
	b = optString(b, `,"toolCallId":`, m.ToolCallID)
	b = optString(b, `,"toolName":`, m.ToolName)
	if m.IsError && m.Role != llm.ToolResult {
		b = append(b, `,"isError":true`...)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	if m.Role == llm.ToolResult {
		// llm.Message.MarshalJSON writes a tool result's isError always,
		// after the other fields.
		b = append(b, `,"isError":`...)
		b = strconv.AppendBool(b, m.IsError)
	}
	return append(b, '}')
}

func appendContents(b []byte, cs []llm.Content, tc *textCache) []byte {
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContent(b, &cs[i], tc.block(i))
	}
	return append(b, ']')
}

func appendContent(b []byte, c *llm.Content, ct *cachedText) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type)
	b = ct.opt(b, `,"text":`, c.Text)
	b = ct.opt(b, `,"thinking":`, c.Thinking)
	b = optString(b, `,"thinkingSignature":`, c.ThinkingSignature)
	b = optString(b, `,"data":`, c.Data)
	b = optString(b, `,"mimeType":`, c.MimeType)
	b = optString(b, `,"id":`, c.ID)
	b = optString(b, `,"name":`, c.Name)
	if len(c.Arguments) > 0 {
		b = append(b, `,"arguments":`...)
		b = appendRaw(b, c.Arguments, "{}")
	}
	b = optString(b, `,"thoughtSignature":`, c.ThoughtSignature)
	return append(b, '}')
}

func optString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return appendString(b, s)
}

// appendRaw writes raw JSON (tool arguments), or def for an empty or
// invalid value, so that one bad value can never break a line.
func appendRaw(b []byte, raw json.RawMessage, def string) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return append(b, def...)
	}
	// Compact keeps the line one line even if the raw value had newlines.
	n := len(b)
	if hasSpace(raw) {
		if out, err := compact(b, raw); err == nil {
			return out
		}
		b = b[:n]
	}
	return append(b, raw...)
}

func hasSpace(raw []byte) bool {
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

func compact(b, raw []byte) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	err := json.Compact(buf, raw)
	return buf.Bytes(), err
}

// appendFloat formats like encoding/json: shortest representation,
// exponent form only for very small or very large magnitudes.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, '0') // not representable in JSON
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string. Runs of plain ASCII are found
// eight bytes at a time: streamed text is mostly such runs, and this is
// where the time of a long message goes.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped writes s escaped, without the quotes. Escaping a string in
// two pieces gives the bytes of escaping it whole when the first piece
// ends with a complete rune (see cachedText).
func appendEscaped(b []byte, s string) []byte {
	start := 0
	i := 0
	for i < len(s) {
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// plain8 reports whether the 8 bytes of s are ASCII that needs no escape:
// no byte ≥ 0x80, < 0x20, '"' or '\\'.
func plain8(s string) bool {
	const (
		lo   = 0x0101010101010101
		hi   = 0x8080808080808080
		dq   = 0x2222222222222222
		bs   = 0x5C5C5C5C5C5C5C5C
		ctrl = 0x2020202020202020
	)
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	zero := func(v uint64) uint64 { return (v - lo) &^ v & hi }
	return (w&hi)|((w-ctrl)&^w&hi)|zero(w^dq)|zero(w^bs) == 0
}
