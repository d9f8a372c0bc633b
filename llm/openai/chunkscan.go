package openai

import (
	"unicode/utf8"
	"unsafe"

	"github.com/rally-agent/rally/internal/jsonscan"
)

// The chunk decoder of the hot path: one pass over a chat.completion.chunk
// with its position in a register (jsonscan's ...At reads), reading the
// few fields the parser needs and validating every other one as it skips
// it. It reads what fastChunkView's field closures read, exactly as they
// did, at about half their cost (BenchmarkChunkDecode); a tool-call delta
// is handed to those readers (scan.toolDelta), as its arguments are
// copies anyway. FuzzFastDecode holds it to encoding/json.

// chunkAt decodes the chunk in data into c, reading streamed text as
// views (see scan) appended to *buf, which the caller has emptied.
func chunkAt(data []byte, c *chunk, buf *[]byte) bool {
	i := jsonscan.WS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = jsonscan.WS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return jsonscan.WS(data, i+1) == len(data)
	}
	var seen uint32
	for {
		k, j := jsonscan.KeyAt(data, i)
		if j < 0 {
			return false
		}
		switch string(k) {
		case "choices":
			if !jsonscan.Once(&seen, 1) {
				return false
			}
			j = choicesAt(data, j, c, buf)
		case "usage":
			if !jsonscan.Once(&seen, 2) {
				return false
			}
			j = jsonscan.NullAt(data, j)
		case "error":
			if !jsonscan.Once(&seen, 4) {
				return false
			}
			j = jsonscan.NullAt(data, j)
		default:
			j = jsonscan.SkipAt(data, j)
		}
		if i = next(data, j, '}'); i < 0 {
			return false
		}
		if data[i-1] == '}' {
			return jsonscan.WS(data, i) == len(data)
		}
	}
}

// next reads what follows a member or element at j: a comma, or the
// closing byte. It returns the position after it, -1 for anything else;
// the caller tells which by the byte before.
func next(b []byte, j int, closing byte) int {
	if j < 0 {
		return -1
	}
	j = jsonscan.WS(b, j)
	if j < len(b) && (b[j] == ',' || b[j] == closing) {
		return j + 1
	}
	return -1
}

// choicesAt reads the choices array (or null) into c.Choices, reusing its
// elements as jsonscan.Array does.
func choicesAt(b []byte, i int, c *chunk, buf *[]byte) int {
	if j := jsonscan.NullAt(b, i); j >= 0 {
		c.Choices = nil
		return j
	}
	if i >= len(b) || b[i] != '[' {
		return -1
	}
	out := c.Choices[:0]
	if out == nil {
		out = make([]choice, 0, 1)
	}
	i = jsonscan.WS(b, i+1)
	if i < len(b) && b[i] == ']' {
		c.Choices = out
		return i + 1
	}
	for {
		out = append(out, choice{})
		if i = next(b, choiceAt(b, i, &out[len(out)-1], buf), ']'); i < 0 {
			return -1
		}
		if b[i-1] == ']' {
			c.Choices = out
			return i
		}
	}
}

func choiceAt(b []byte, i int, ch *choice, buf *[]byte) int {
	if i = jsonscan.WS(b, i); i >= len(b) || b[i] != '{' {
		return -1
	}
	i = jsonscan.WS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var seen uint32
	for {
		k, j := jsonscan.KeyAt(b, i)
		if j < 0 {
			return -1
		}
		switch string(k) {
		case "index":
			if !jsonscan.Once(&seen, 1) {
				return -1
			}
			ch.Index, j = jsonscan.IntAt(b, j)
		case "delta":
			if !jsonscan.Once(&seen, 2) {
				return -1
			}
			if n := jsonscan.NullAt(b, j); n >= 0 {
				j = n
			} else {
				j = deltaAt(b, j, &ch.Delta, buf)
			}
		case "finish_reason":
			if !jsonscan.Once(&seen, 4) {
				return -1
			}
			j = finishAt(b, j, &ch.FinishReason)
		default:
			j = jsonscan.SkipAt(b, j)
		}
		if i = next(b, j, '}'); i < 0 || b[i-1] == '}' {
			return i
		}
	}
}

// finishAt reads a string or null into a *string, as encoding/json does
// (scan.optText).
func finishAt(b []byte, i int, dst **string) int {
	if j := jsonscan.NullAt(b, i); j >= 0 {
		*dst = nil
		return j
	}
	v := new(string)
	*dst = v
	s := scan{Scanner: jsonscan.New(b[i:])}
	if !s.Text(v) {
		return -1
	}
	return i + s.Pos()
}

func deltaAt(b []byte, i int, d *delta, buf *[]byte) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i = jsonscan.WS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var seen uint32
	for {
		k, j := jsonscan.KeyAt(b, i)
		if j < 0 {
			return -1
		}
		var bit uint32
		var dst *string
		switch string(k) {
		case "content":
			bit, dst = 1, &d.Content
		case "refusal":
			bit, dst = 2, &d.Refusal
		case "reasoning_content":
			bit, dst = 4, &d.ReasoningContent
		case "reasoning":
			bit, dst = 8, &d.Reasoning
		case "tool_calls":
			bit = 16
		case "reasoning_details":
			bit = 32
		}
		switch {
		case bit == 0:
			j = jsonscan.SkipAt(b, j)
		case !jsonscan.Once(&seen, bit):
			return -1
		case dst != nil:
			j = textAt(b, j, dst, buf)
		case bit == 32:
			j = jsonscan.NullAt(b, j)
		default: // tool_calls
			s := scan{Scanner: jsonscan.New(b[j:])}
			if !jsonscan.Array(&s.Scanner, &d.ToolCalls, s.toolDelta) {
				return -1
			}
			j += s.Pos()
		}
		if i = next(b, j, '}'); i < 0 || b[i-1] == '}' {
			return i
		}
	}
}

// textAt reads streamed text, a string or null, as a view (Scanner.View):
// of b when the string has no escapes and is valid UTF-8, else of its
// decoded form appended to *buf.
func textAt(b []byte, i int, dst *string, buf *[]byte) int {
	if j := jsonscan.NullAt(b, i); j >= 0 {
		return j
	}
	end, esc := jsonscan.QuotedAt(b, i)
	if end < 0 {
		return -1
	}
	raw := b[i+1 : end-1]
	switch {
	case len(raw) == 0:
		*dst = ""
	case !esc && utf8.Valid(raw):
		*dst = unsafe.String(&raw[0], len(raw))
	default:
		start := len(*buf)
		*buf = jsonscan.AppendUnquoted(*buf, raw)
		if v := (*buf)[start:]; len(v) > 0 {
			*dst = unsafe.String(&v[0], len(v))
		} else {
			*dst = ""
		}
	}
	return end
}
