package retry

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The classifier reads only a few fields out of an error body, but decoding
// it with encoding/json into map[string]any built every object of it and
// was half the time Classify took on a Gemini quota error. jsonValue walks
// the raw text instead: one pass checks that the value is well-formed JSON
// (the same grammar encoding/json accepts), a second hands each string and
// number to facts.field with its key, in document order, allocating only for
// strings that carry escapes.

// maxDepth is encoding/json's nesting limit; deeper bodies are not JSON to
// the classifier either.
const maxDepth = 10000

// jsonWalker walks one JSON value. With ft nil it only checks the syntax.
type jsonWalker struct {
	s     string
	i     int
	ft    *facts
	text  *strings.Builder
	nodes int // values visited, bounded by maxWalk
}

// jsonValue checks the JSON value at the start of s and returns its length,
// or ok false if s does not start with well-formed JSON.
func jsonValue(s string) (n int, ok bool) {
	w := jsonWalker{s: s}
	if !w.value("", 0) {
		return 0, false
	}
	return w.i, true
}

// walkJSON hands the fields of the well-formed JSON value s to ft.
func (ft *facts) walkJSON(s string, text *strings.Builder) {
	w := jsonWalker{s: s, ft: ft, text: text}
	w.value("", 0)
}

func (w *jsonWalker) space() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *jsonWalker) value(key string, depth int) bool {
	if depth > maxDepth {
		return false
	}
	w.space()
	if w.i >= len(w.s) {
		return false
	}
	w.nodes++
	emit := w.ft != nil && w.nodes <= maxWalk
	switch c := w.s[w.i]; {
	case c == '{':
		w.i++
		w.space()
		if w.i < len(w.s) && w.s[w.i] == '}' {
			w.i++
			return true
		}
		for {
			w.space()
			k, ok := w.str()
			if !ok {
				return false
			}
			w.space()
			if w.i >= len(w.s) || w.s[w.i] != ':' {
				return false
			}
			w.i++
			if !w.value(strings.ToLower(k), depth+1) {
				return false
			}
			if more, ok := w.after('}'); !more {
				return ok
			}
		}
	case c == '[':
		w.i++
		w.space()
		if w.i < len(w.s) && w.s[w.i] == ']' {
			w.i++
			return true
		}
		for {
			// Elements of an array take the array's key, as before.
			if !w.value(key, depth+1) {
				return false
			}
			if more, ok := w.after(']'); !more {
				return ok
			}
		}
	case c == '"':
		v, ok := w.str()
		if ok && emit {
			w.ft.field(key, v, w.text)
		}
		return ok
	case c == '-' || '0' <= c && c <= '9':
		start := w.i
		if !w.number() {
			return false
		}
		if emit {
			w.ft.number(key, w.s[start:w.i], w.text)
		}
		return true
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(w.s[w.i:], lit) {
				w.i += len(lit)
				return true
			}
		}
		return false
	}
}

// after reads what follows a member or element: a comma (more follow) or
// the closing bracket (done, ok), anything else is malformed.
func (w *jsonWalker) after(closing byte) (more, ok bool) {
	w.space()
	if w.i >= len(w.s) {
		return false, false
	}
	switch w.s[w.i] {
	case ',':
		w.i++
		return true, true
	case closing:
		w.i++
		return false, true
	}
	return false, false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *jsonWalker) number() bool {
	s, i := w.s, w.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	w.i = i
	return true
}

// str reads a JSON string at w.i and returns its value.
func (w *jsonWalker) str() (string, bool) {
	s := w.s
	if w.i >= len(s) || s[w.i] != '"' {
		return "", false
	}
	start := w.i + 1
	escaped := false
	i := start
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", false // a raw control character: not JSON
		}
		if c == '\\' {
			escaped = true
			i++
			if i >= len(s) {
				return "", false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) || !isHex4(s[i+1:i+5]) {
					return "", false
				}
				i += 4
			default:
				return "", false
			}
		}
	}
	if i >= len(s) {
		return "", false
	}
	w.i = i + 1
	raw := s[start:i]
	if !escaped || w.ft == nil {
		return raw, true
	}
	return unescape(raw), true
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// unescape decodes the escapes of a JSON string body already checked by
// str, as encoding/json does (an unpaired surrogate becomes U+FFFD).
func unescape(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' && isHex4(raw[i+3:i+7]) {
					if d := utf16.DecodeRune(r, hex4(raw[i+3:i+7])); d != utf8.RuneError {
						b.WriteRune(d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(raw[i])
		}
	}
	return b.String()
}

func hex4(s string) rune {
	n, _ := strconv.ParseUint(s, 16, 32)
	return rune(n)
}
