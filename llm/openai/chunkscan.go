package openai

import (
	"bytes"

	"github.com/rally-agent/rally/internal/jsonscan"
)

// The chunk decoder of the hot path: one pass over a chat.completion.chunk
// with its position in a register (jsonscan's ...At reads), reading the
// few fields the parser needs and validating every other one as it skips
// it. It reads what the Scanner's field closures it replaces read, exactly
// as they did, without a closure call per key or a store and load of the
// position per token (14 % fewer instructions for OpenAI's text chunk
// read whole, BenchmarkChunkDecode); a tool-call delta is handed to the
// Scanner (scan.toolDelta), as its arguments are copies anyway.
// FuzzFastDecode and FuzzFastChunkView hold it to encoding/json.

// A stream's chunks repeat one another but for the text they stream:
// {"id":"chatcmpl-…","object":"chat.completion.chunk","created":…,
// "model":…,"system_fingerprint":…,"choices":[{"index":0,"delta":
// {"content":" and "},"logprobs":null,"finish_reason":null}]} are 220
// of a text chunk's 240 bytes from llmtest, and most of OpenAI's (whose
// "obfuscation" differs from chunk to chunk). A decoder reads bytes from
// left to right and nothing else, so a chunk that begins with the same
// bytes as one already decoded reaches the same state at their end, and
// after the content's string the same bytes lead from the same state to
// the same end. chunkDecoder keeps the bytes before the first choice's
// content (the prefix), the state there, and the bytes after it (the
// suffix) when they decoded nothing but the choice's index; a chunk with
// the same prefix is read from the content on, and one with the same
// suffix too is done once the content is read. FuzzChunkRepeat holds it
// to a decoder that reads every chunk whole.
//
// A suffix that misses once is dropped, not replaced by the new chunk's:
// in the recorded streams a suffix repeats from the first text chunk on
// (llmtest's, Groq's, Ollama's, OpenRouter's) or never does (OpenAI's and
// Azure's obfuscation, a padding of varying length), and copying a suffix
// that never matches cost every OpenAI chunk.

// maxRepeat bounds the prefix and the suffix a chunkDecoder keeps: a
// chunk with a longer one is read whole.
const maxRepeat = 512

// repeat is a decoding's state where the first choice's content starts:
// read before it, the chunk's keys (top), the choice's (choice) and its
// index; nothing else, as only a state whole in these is noted (see
// choiceFields and deltaFields).
type repeat struct {
	at     int // where the content's string starts (after its quote), 0 if not noted
	end    int // where it ends (after its quote)
	top    uint32
	choice uint32
	index  int
}

// chunkDecoder decodes a stream's chunks (fastChunkView), resuming after
// the bytes a chunk repeats of the last one whose content was noted.
type chunkDecoder struct {
	buf    []byte // the text views' scratch (jsonscan.View)
	prefix []byte // that chunk's bytes up to its content's opening quote
	rep    repeat // the state there
	// suffix is the bytes after that chunk's content, which decoded
	// nothing but the choice's index, suffixIndex; empty if they decoded
	// more, or once a chunk with the prefix did not end with them.
	suffix      []byte
	suffixIndex int
}

// decode is fastChunkView with the decoder's scratch, for the chunks of
// one stream, each reset by the caller as chatParser.fill resets it. It
// keeps the bytes and states of chunks it decoded, never of one it
// refused.
func (d *chunkDecoder) decode(data []byte, c *chunk) bool {
	d.buf = d.buf[:0]
	if len(d.prefix) > 0 && bytes.HasPrefix(data, d.prefix) {
		return d.resume(data, c)
	}
	var rec repeat
	if !chunkAt(data, c, &d.buf, &rec) {
		return false
	}
	if rec.at > 0 && rec.at <= maxRepeat {
		d.prefix = append(d.prefix[:0], data[:rec.at]...)
		d.rep = rec
		d.noteSuffix(data[rec.end:], c)
	}
	return true
}

// noteSuffix keeps the bytes after the content of the chunk just decoded
// into c if all they decoded is the choice's index: one choice holding
// only its index and content (the chunk's usage and error the decoder
// reads only as null, TestChunkFieldsReadOnlyAsNull).
func (d *chunkDecoder) noteSuffix(suffix []byte, c *chunk) {
	d.suffix = d.suffix[:0]
	if len(suffix) > maxRepeat || len(c.Choices) != 1 || !onlyContent(&c.Choices[0]) {
		return
	}
	d.suffix = append(d.suffix, suffix...)
	d.suffixIndex = c.Choices[0].Index
}

// resume reads a chunk that begins with d.prefix from there on, as
// chunkAt would after reading the prefix: the first choice's content,
// then the rest of the delta, the choice, the choices and the chunk.
func (d *chunkDecoder) resume(data []byte, c *chunk) bool {
	r := &d.rep
	if cap(c.Choices) == 0 {
		c.Choices = make([]choice, 1)
	}
	c.Choices = c.Choices[:1]
	ch := &c.Choices[0]
	clearChoice(ch, r.index)
	end := jsonscan.ViewAt(data, r.at-1, &ch.Delta.Content, &d.buf)
	if end < 0 {
		return false
	}
	if len(d.suffix) > 0 {
		if bytes.Equal(data[end:], d.suffix) {
			ch.Index = d.suffixIndex
			return true
		}
		d.suffix = d.suffix[:0] // see "A suffix that misses once" above
	}
	j := end
	if j = next(data, j, '}'); j > 0 && data[j-1] == ',' {
		j = deltaFields(data, j, &ch.Delta, &d.buf, 1, nil)
	}
	if j = next(data, j, '}'); j > 0 && data[j-1] == ',' {
		j = choiceFields(data, j, ch, &d.buf, r.choice, nil)
	}
	// Each read above returns -1 on bad input, and next passes it on.
	if j = next(data, choicesFrom(data, j, c, &d.buf), '}'); j < 0 {
		return false
	}
	if data[j-1] == ',' {
		return chunkFields(data, j, c, &d.buf, r.top, nil)
	}
	return jsonscan.WS(data, j) == len(data)
}

// onlyContent reports whether ch holds nothing but its index and its
// delta's content: what a suffix must have left to be kept, and all a
// reused choice needs cleared. TestChoiceFieldsCleared fails for a field
// it does not name.
func onlyContent(ch *choice) bool {
	d := &ch.Delta
	return ch.FinishReason == nil && d.Refusal == "" && d.ReasoningContent == "" && d.Reasoning == "" &&
		d.ReasoningDetails == nil && d.ToolCalls == nil
}

// clearChoice makes a reused choice what choice{Index: index} is. In a
// stream of text chunks only the content is set, so it writes the content
// alone: a new struct assigned whole is moved with the collector's write
// barrier over every pointer it holds (runtime.bulkBarrierPreWrite, a
// fifth of the parser's time while the collector runs). Anything else
// set (by a tool call, a finish, or encoding/json for a chunk the fast
// path refused) is cleared by assigning it whole.
func clearChoice(ch *choice, index int) {
	if !onlyContent(ch) {
		*ch = choice{Index: index}
		return
	}
	ch.Index, ch.Delta.Content = index, ""
}

// chunkAt decodes the chunk in data into c, reading streamed text as
// views (see scan) appended to *buf, which the caller has emptied. With
// rec set, it notes where the first choice's content starts (see repeat).
func chunkAt(data []byte, c *chunk, buf *[]byte, rec *repeat) bool {
	i := jsonscan.WS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = jsonscan.WS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return jsonscan.WS(data, i+1) == len(data)
	}
	return chunkFields(data, i, c, buf, 0, rec)
}

// chunkFields reads the chunk's members from the key at i to the end of
// the input, with the keys in seen already read.
func chunkFields(data []byte, i int, c *chunk, buf *[]byte, seen uint32, rec *repeat) bool {
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
			if rec != nil {
				rec.top = seen
			}
			j = choicesAt(data, j, c, buf, rec)
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
func choicesAt(b []byte, i int, c *chunk, buf *[]byte, rec *repeat) int {
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
	c.Choices = append(out, choice{})
	return choicesFrom(b, choiceAt(b, i, &c.Choices[0], buf, rec), c, buf)
}

// choicesFrom reads the rest of the choices array after the element that
// ends at i.
func choicesFrom(b []byte, i int, c *chunk, buf *[]byte) int {
	for {
		if i = next(b, i, ']'); i < 0 || b[i-1] == ']' {
			return i
		}
		c.Choices = append(c.Choices, choice{})
		i = choiceAt(b, i, &c.Choices[len(c.Choices)-1], buf, nil)
	}
}

func choiceAt(b []byte, i int, ch *choice, buf *[]byte, rec *repeat) int {
	if i = jsonscan.WS(b, i); i >= len(b) || b[i] != '{' {
		return -1
	}
	i = jsonscan.WS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	return choiceFields(b, i, ch, buf, 0, rec)
}

// choiceFields reads a choice's members from the key at i to its closing
// brace, with the keys in seen already read.
func choiceFields(b []byte, i int, ch *choice, buf *[]byte, seen uint32, rec *repeat) int {
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
				break
			}
			var r *repeat
			if rec != nil && ch.FinishReason == nil {
				// Nothing but the index (an int) was decoded before
				// the delta: repeat holds the whole state at it.
				r, rec.choice, rec.index = rec, seen, ch.Index
			}
			j = deltaAt(b, j, &ch.Delta, buf, r)
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

func deltaAt(b []byte, i int, d *delta, buf *[]byte, rec *repeat) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i = jsonscan.WS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	return deltaFields(b, i, d, buf, 0, rec)
}

// deltaFields reads a delta's members from the key at i to its closing
// brace, with the keys in seen already read.
func deltaFields(b []byte, i int, d *delta, buf *[]byte, seen uint32, rec *repeat) int {
	for {
		k, j := jsonscan.KeyAt(b, i)
		if j < 0 {
			return -1
		}
		var bit uint32
		var dst *string
		note := false
		switch string(k) {
		case "content":
			// Nothing read into the delta yet: note where its string is.
			note = seen == 0 && rec != nil && j < len(b) && b[j] == '"'
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
			if note {
				rec.at = j + 1
			}
			if j = jsonscan.ViewAt(b, j, dst, buf); note {
				rec.end = j
			}
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
