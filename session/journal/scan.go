package journal

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// scanner reads one JSON value in a single pass, for the entry lines that
// rally and pi write. It knows only what a journal line needs and gives
// up (ok false) on anything it does not handle exactly as encoding/json
// would; the caller then decodes the line with encoding/json, which
// reports the problem. Keys must match exactly: a key that differs from a
// known one only in case (which encoding/json would accept) also gives up.
type scanner struct {
	b   []byte
	i   int
	bad bool
	tmp []byte // unescaped bytes of the string being read
	// names holds the values that repeat on every line (roles, types,
	// model names), so a long file keeps one copy of each.
	names map[string]string
}

// reset starts reading line.
func (s *scanner) reset(line []byte) { s.b, s.i, s.bad = line, 0, false }

func (s *scanner) fail() { s.bad = true; s.i = len(s.b) }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next returns the next byte after spaces (0 at the end).
func (s *scanner) next() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// lit consumes the literal w (true, false, null).
func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		s.fail()
		return false
	}
	s.i += len(w)
	return true
}

// null consumes a null if one is next.
func (s *scanner) null() bool {
	if s.next() == 'n' {
		return s.lit("null")
	}
	return false
}

// object calls field for each key of an object; field must consume the
// value. A null stands for an absent object, as encoding/json has it.
func (s *scanner) object(field func(key string)) {
	if s.null() {
		return
	}
	if s.next() != '{' {
		s.fail()
		return
	}
	s.i++
	if s.next() == '}' {
		s.i++
		return
	}
	for !s.bad {
		key := s.key()
		if s.next() != ':' {
			s.fail()
			return
		}
		s.i++
		s.ws()
		field(key)
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// key reads an object key, which must need no unescaping. Returning a
// string of the line's bytes does not allocate when it is only compared.
func (s *scanner) key() string {
	if s.next() != '"' {
		s.fail()
		return ""
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return unsafeString(s.b[start:i])
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			s.fail()
			return ""
		}
	}
	s.fail()
	return ""
}

// array calls elem for each element of an array; null is an empty one.
func (s *scanner) array(elem func()) {
	if s.null() {
		return
	}
	if s.next() != '[' {
		s.fail()
		return
	}
	s.i++
	if s.next() == ']' {
		s.i++
		return
	}
	for !s.bad {
		s.ws()
		elem()
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// str reads a string value; null leaves it "".
func (s *scanner) str() string {
	if s.null() {
		return ""
	}
	if s.next() != '"' {
		s.fail()
		return ""
	}
	start := s.i + 1
	high := false
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			if high && !utf8.Valid(s.b[start:i]) {
				s.fail() // encoding/json would replace the bad bytes
				return ""
			}
			return string(s.b[start:i])
		case c == '\\':
			s.i = start
			return s.unescape()
		case c < 0x20:
			s.fail()
			return ""
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	s.fail()
	return ""
}

// name reads a string value that many lines repeat, interned.
func (s *scanner) name() string {
	if s.next() != '"' {
		return s.str()
	}
	start := s.i + 1
	end := start
	for end < len(s.b) && end-start <= 64 && s.b[end] != '"' && s.b[end] != '\\' && s.b[end] >= 0x20 && s.b[end] < utf8.RuneSelf {
		end++
	}
	if end >= len(s.b) || s.b[end] != '"' {
		return s.str() // long, escaped or not plain ASCII: not a name
	}
	s.i = end + 1
	if v, ok := s.names[unsafeString(s.b[start:end])]; ok {
		return v
	}
	v := string(s.b[start:end])
	if s.names == nil {
		s.names = map[string]string{}
	}
	if len(s.names) < 1024 {
		s.names[v] = v
	}
	return v
}

// view reads a string value without copying it: valid only until the
// line's buffer is reused. An escaped string is copied.
func (s *scanner) view() string {
	if s.next() != '"' {
		return s.str()
	}
	start := s.i + 1
	end := start
	for end < len(s.b) && s.b[end] != '"' && s.b[end] != '\\' && s.b[end] >= 0x20 && s.b[end] < utf8.RuneSelf {
		end++
	}
	if end >= len(s.b) || s.b[end] != '"' {
		return s.str()
	}
	s.i = end + 1
	return unsafeString(s.b[start:end])
}

// unescape reads the rest of a string with escapes, from s.i (just past
// the opening quote).
func (s *scanner) unescape() string {
	out := s.tmp[:0]
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			s.tmp = out[:0]
			if !utf8.Valid(out) {
				s.fail()
				return ""
			}
			return string(out)
		case c < 0x20:
			s.fail()
			return ""
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		s.i += 2
		switch e := s.b[s.i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := s.hex4()
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					if r2 = s.hex4(); utf16.DecodeRune(r, r2) == utf8.RuneError {
						s.i, r2 = save, -1 // not a pair: the second is read on its own
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			s.fail()
			return ""
		}
	}
	s.fail()
	return ""
}

func (s *scanner) hex4() rune {
	if len(s.b)-s.i < 4 {
		s.fail()
		return 0
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			s.fail()
			return 0
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r
}

// number returns the bytes of a number value.
func (s *scanner) number() []byte {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E' || s.b[s.i] == '+' || s.b[s.i] == '-') {
		s.i++
	}
	if s.i == digits {
		s.fail()
		return nil
	}
	return s.b[start:s.i]
}

// int reads an integer value; null leaves it 0. A fraction or exponent
// gives up (encoding/json refuses them for an integer).
func (s *scanner) int() int64 {
	if s.null() {
		return 0
	}
	s.ws()
	b := s.number()
	n, err := strconv.ParseInt(unsafeString(b), 10, 64)
	if err != nil || !validNumber(b) {
		s.fail()
	}
	return n
}

// float reads a number value; null leaves it 0.
func (s *scanner) float() float64 {
	if s.null() {
		return 0
	}
	s.ws()
	b := s.number()
	f, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil || !validNumber(b) {
		s.fail()
	}
	return f
}

// validNumber reports whether b is a number in JSON's grammar (ParseFloat
// takes more: "+1", "1.", ".5", "0x1p3", "Inf").
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// bool reads a boolean value; null leaves it false.
func (s *scanner) bool() bool {
	switch s.next() {
	case 't':
		return s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	default:
		s.fail()
	}
	return false
}

// skip consumes any value, checking it is valid JSON.
func (s *scanner) skip(depth int) {
	if depth > 1000 {
		s.fail()
		return
	}
	switch s.next() {
	case '{':
		s.object(func(string) { s.skip(depth + 1) })
	case '[':
		s.array(func() { s.skip(depth + 1) })
	case '"':
		s.str()
	case 't':
		s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	default:
		if !validNumber(s.number()) {
			s.fail()
		}
	}
}

// raw returns a copy of the next value's bytes, as json.RawMessage holds
// it.
func (s *scanner) raw() []byte {
	s.ws()
	start := s.i
	s.skip(0)
	return append([]byte(nil), s.b[start:s.i]...)
}

// end checks that nothing but spaces follows.
func (s *scanner) end() {
	if s.ws(); s.i != len(s.b) {
		s.fail()
	}
}

// unsafeString is b as a string without a copy, for values that are
// compared or parsed and never kept.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
