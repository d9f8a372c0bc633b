package retry

import (
	"strings"
	"unsafe"

	"github.com/rally-agent/rally/internal/jsonscan"
)

// The classifier reads only a few fields out of an error body, but decoding
// it with encoding/json into map[string]any built every object of it and
// was half the time Classify took on a Gemini quota error. jsonValue walks
// the raw text with the kit's validating scanner (internal/jsonscan, the
// one the providers' stream decoders use) instead: one pass checks that the
// value is well-formed JSON (the same grammar encoding/json accepts), a
// second hands each string and number to facts.field with its key, in
// document order, allocating only for strings that carry escapes.

// maxDepth is encoding/json's nesting limit; deeper bodies are not JSON to
// the classifier either.
const maxDepth = 10000

// jsonWalker walks one JSON value. With ft nil it only checks the syntax.
type jsonWalker struct {
	s     string
	sc    jsonscan.Scanner
	ft    *facts
	text  *strings.Builder
	nodes int // values visited, bounded by maxWalk
}

// newWalker scans s in place: the scanner reads the string's own bytes and
// never writes them, so the walk copies nothing.
func newWalker(s string, ft *facts, text *strings.Builder) jsonWalker {
	return jsonWalker{s: s, sc: jsonscan.New(unsafe.Slice(unsafe.StringData(s), len(s))), ft: ft, text: text}
}

// jsonValue checks the JSON value at the start of s and returns its length,
// or ok false if s does not start with well-formed JSON.
func jsonValue(s string) (n int, ok bool) {
	w := newWalker(s, nil, nil)
	if !w.value("", 0) {
		return 0, false
	}
	return w.sc.Pos(), true
}

// walkJSON hands the fields of the well-formed JSON value s to ft.
func (ft *facts) walkJSON(s string, text *strings.Builder) {
	w := newWalker(s, ft, text)
	w.value("", 0)
}

func (w *jsonWalker) value(key string, depth int) bool {
	if depth > maxDepth {
		return false
	}
	c := w.sc.Peek()
	w.nodes++
	emit := w.ft != nil && w.nodes <= maxWalk
	switch {
	case c == '{':
		w.sc.Eat('{')
		if w.sc.Eat('}') {
			return true
		}
		for {
			k, ok := w.str(true)
			if !ok || !w.sc.Eat(':') || !w.value(strings.ToLower(k), depth+1) {
				return false
			}
			if !w.sc.Eat(',') {
				return w.sc.Eat('}')
			}
		}
	case c == '[':
		w.sc.Eat('[')
		if w.sc.Eat(']') {
			return true
		}
		for {
			// Elements of an array take the array's key.
			if !w.value(key, depth+1) {
				return false
			}
			if !w.sc.Eat(',') {
				return w.sc.Eat(']')
			}
		}
	case c == '"':
		v, ok := w.str(emit)
		if ok && emit {
			w.ft.field(key, v, w.text)
		}
		return ok
	default:
		// A number or a literal; Skip validates it.
		start := w.sc.Pos()
		if !w.sc.Skip(0) {
			return false
		}
		if emit && (c == '-' || '0' <= c && c <= '9') {
			w.ft.number(key, w.s[start:w.sc.Pos()], w.text)
		}
		return true
	}
}

// str reads a string at the scanner's position; with decode, it returns
// its value: the input's own text when it has no escapes, else the text
// decoded as encoding/json decodes it.
func (w *jsonWalker) str(decode bool) (string, bool) {
	w.sc.Peek()             // past the space before it
	start := w.sc.Pos() + 1 // after the opening quote
	raw, esc, ok := w.sc.Str()
	switch {
	case !ok || !decode:
		return "", ok
	case esc:
		return jsonscan.Unquote(raw), true
	}
	return w.s[start : start+len(raw)], true
}
