// Package jsonscan is a small validating JSON reader for the hot paths
// where encoding/json's reflection costs more than the work: the deltas of
// a provider's stream. A fast decoder built on it reads the few fields it
// needs and skips the rest in one pass; whenever the input is not exactly
// what it handles, the decoder gives up and its caller decodes the value
// with encoding/json, which then gives the same result or the same error
// it always would. Differential fuzz tests hold each decoder to that.
package jsonscan

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Scanner is a small validating JSON reader for the hot path: the text,
// reasoning and tool-argument deltas that make up nearly every event of a
// stream. encoding/json takes about 5 µs for one OpenAI chunk on a small
// machine, mostly in reflection and a second validation pass over fields
// the parser does not need; scan reads the few fields it needs and skips
// the rest in one pass, at a tenth of that. The zero Scanner reads
// nothing; New starts one on a value.
//
// It never guesses: whenever input is not exactly what it handles (a
// malformed or unusual token, a key that is escaped, not lowercase ASCII or
// repeated, a field of an unexpected type) the fast decoders report
// failure and the caller decodes the event with encoding/json, which then
// gives the same result or the same error it always would. A differential
// fuzz test holds the two to the same answers.
type Scanner struct {
	b []byte
	i int
}

// New returns a Scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b} }

// maxDepth bounds nesting in skipped values; deeper input goes to
// encoding/json.
const maxDepth = 64

func (s *Scanner) ws() { s.i = WS(s.b, s.i) }

// Pos returns how many bytes have been read.
func (s *Scanner) Pos() int { return s.i }

// Peek returns the next byte after white space, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Eat consumes c if it comes next.
func (s *Scanner) Eat(c byte) bool {
	if s.Peek() == c {
		s.i++
		return true
	}
	return false
}

// Null consumes a null literal if one comes next.
func (s *Scanner) Null() bool {
	s.ws()
	return s.lit("null")
}

func (s *Scanner) lit(l string) bool {
	if j := litAt(s.b, s.i, l); j >= 0 {
		s.i = j
		return true
	}
	return false
}

// Str reads a string token and returns what is between its quotes and
// whether it has escapes (Unquote decodes them). raw is the input's own
// bytes.
func (s *Scanner) Str() (raw []byte, esc, ok bool) {
	raw, esc, _, ok = s.quoted()
	return raw, esc, ok
}

// Quoted reads a string token as Str does, reporting instead of its
// escapes whether raw is its Go text as it stands: no escapes and valid
// UTF-8 (Unquote decodes any other, as encoding/json would). It checks
// UTF-8 only for a string with a byte past ASCII.
func (s *Scanner) Quoted() (raw []byte, plain, ok bool) {
	raw, esc, high, ok := s.quoted()
	return raw, ok && asIs(raw, esc, high), ok
}

// quoted reads a string token after white space (quotedAt).
func (s *Scanner) quoted() (raw []byte, esc, high, ok bool) {
	s.ws()
	end, esc, high := quotedAt(s.b, s.i)
	if end < 0 {
		return nil, false, false, false
	}
	raw = s.b[s.i+1 : end-1]
	s.i = end
	return raw, esc, high, true
}

// Text reads a string or null as Go text, the way encoding/json does.
func (s *Scanner) Text(dst *string) bool {
	if s.Null() {
		return true
	}
	raw, plain, ok := s.Quoted()
	if !ok {
		return false
	}
	if plain {
		*dst = string(raw)
	} else {
		*dst = Unquote(raw)
	}
	return true
}

// key reads an object key that the fast decoders may compare exactly:
// unescaped lowercase ASCII, digits and underscores (encoding/json matches
// keys case-insensitively, so anything else goes to it).
func (s *Scanner) key() ([]byte, bool) {
	k, next := KeyAt(s.b, s.i)
	if next < 0 {
		return nil, false
	}
	s.i = next
	return k, true
}

// Int reads an integer or null (0). Fractions, exponents and very long
// numbers are left to encoding/json.
func (s *Scanner) Int(dst *int) bool {
	n, next := IntAt(s.b, s.i)
	if next < 0 {
		return false
	}
	s.i, *dst = next, n
	return true
}

// Skip consumes any one value, validating it.
func (s *Scanner) Skip(depth int) bool {
	next := skipAt(s.b, s.i, depth)
	if next < 0 {
		return false
	}
	s.i = next
	return true
}

// number consumes a number (numberAt).
func (s *Scanner) number() bool {
	next := numberAt(s.b, s.i)
	if next < 0 {
		return false
	}
	s.i = next
	return true
}

// digits returns where the run of decimal digits at b[j:] ends.
func digits(b []byte, j int) int {
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return j
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.i == len(s.b)
}

// Fields reads an object, calling field for each key with the scanner at
// its value; field consumes the value and reports success.
func (s *Scanner) Fields(field func(key []byte) bool) bool {
	if !s.Eat('{') {
		return false
	}
	if s.Eat('}') {
		return true
	}
	for {
		k, ok := s.key()
		if !ok || !field(k) {
			return false
		}
		if !s.Eat(',') {
			return s.Eat('}')
		}
	}
}

// FieldsFold reads an object whose keys may be in any case, as
// encoding/json matches them: field is called for each key of known,
// exactly as spelled there; other keys are skipped. A key that matches one
// of known only when case is ignored fails (encoding/json would take it).
// No two of known may be the same but for case, none is empty, and none
// has a quote or backslash.
func (s *Scanner) FieldsFold(known []string, field func(key string) bool) bool {
	if !s.Eat('{') {
		return false
	}
	if s.Eat('}') {
		return true
	}
	next := 0 // where the search for the next key starts
	for {
		var k string
		if len(known) > 0 && s.expected(known[next]) {
			k = known[next]
			next++
		} else if key, ok := s.keyOf(known, &next); ok {
			k = key
		} else {
			return false
		}
		if !s.Eat(':') {
			return false
		}
		if next == len(known) {
			next = 0
		}
		if k != "" && !field(k) || k == "" && !s.Skip(0) {
			return false
		}
		if !s.Eat(',') {
			return s.Eat('}')
		}
	}
}

// expected reads the key w when it comes next, compared in place: a
// writer puts its keys in one order, which FieldsFold's known lists, so
// nearly every key is the one expected, and comparing it where it lies
// costs less than scanning the string first (a tenth of a long session's
// load was its keys). w has no quote or backslash, so a quote right
// after it closes a key that is w exactly.
func (s *Scanner) expected(w string) bool {
	s.ws()
	end := s.i + 1 + len(w)
	if end >= len(s.b) || s.b[s.i] != '"' || s.b[end] != '"' || string(s.b[s.i+1:end]) != w {
		return false
	}
	s.i = end + 1
	return true
}

// keyOf reads a key and finds it in known, the search starting at *next
// and going round, and moves *next past the key found. It returns "" for
// a key known does not hold, and fails (as on bad JSON) for one that
// matches one of known only when case is folded: known's keys differ by
// more than case, so a key spelled as one of them matches no other when
// folded, and encoding/json would take it.
func (s *Scanner) keyOf(known []string, next *int) (string, bool) {
	raw, esc, ok := s.Str()
	if !ok || esc {
		return "", false
	}
	for n, i := 0, *next; n < len(known); n++ {
		if string(raw) == known[i] {
			*next = i + 1
			return known[i], true
		}
		if i++; i == len(known) {
			i = 0
		}
	}
	for _, w := range known {
		if bytes.EqualFold(raw, []byte(w)) {
			return "", false
		}
	}
	return "", true
}

// Float reads a number, or null (left as it is).
func (s *Scanner) Float(dst *float64) bool {
	if s.Null() {
		return true
	}
	s.ws()
	start := s.i
	if !s.number() {
		return false
	}
	if f, ok := exactFloat(s.b[start:s.i]); ok {
		*dst = f
		return true
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return false // out of range: encoding/json refuses it too
	}
	*dst = f
	return true
}

// Raw reads any value and returns a copy of its bytes, as a
// json.RawMessage field holds it.
func (s *Scanner) Raw() ([]byte, bool) {
	v, ok := s.RawView()
	if !ok {
		return nil, false
	}
	return append([]byte(nil), v...), true
}

// RawView is Raw without the copy: the bytes are the input's.
func (s *Scanner) RawView() ([]byte, bool) {
	s.ws()
	start := s.i
	if !s.Skip(0) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// Bool reads a boolean, or null (left as it is).
func (s *Scanner) Bool(dst *bool) bool {
	switch {
	case s.Null():
		return true
	case s.lit("true"):
		*dst = true
		return true
	case s.lit("false"):
		*dst = false
		return true
	}
	return false
}

// Array reads a JSON array into *dst, each element by elem, or null as a
// nil slice, as encoding/json does. elem reads one element at the
// scanner's position: a method value bound to the scanner (s.choice), as a
// method expression taking the scanner as an argument would make it escape
// to the heap, one more allocation per event.
func Array[T any](s *Scanner, dst *[]T, elem func(*T) bool) bool {
	if s.Null() {
		*dst = nil
		return true
	}
	if !s.Eat('[') {
		return false
	}
	// A slice the caller passes back is reused: a parser that decodes
	// every event into one struct allocates nothing per event. Each
	// element is zeroed before it is read, as a new one would be.
	out := (*dst)[:0]
	if out == nil {
		out = make([]T, 0, 1)
	}
	if !s.Eat(']') {
		for {
			var zero T
			out = append(out, zero)
			if !elem(&out[len(out)-1]) {
				return false
			}
			if !s.Eat(',') {
				break
			}
		}
		if !s.Eat(']') {
			return false
		}
	}
	*dst = out
	return true
}

// Once marks field bit as seen and reports whether it was new. A known key
// seen twice sends the event to encoding/json, which merges repeated keys
// in ways not worth copying.
func Once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// Unquote decodes a string's escapes (already validated by Str) exactly as
// encoding/json does: a lone or broken surrogate and each invalid UTF-8
// byte become U+FFFD.
func Unquote(raw []byte) string {
	out := appendUnquoted(make([]byte, 0, len(raw)), raw)
	// out is never written again: share it instead of copying.
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// View reads a string or null like Text, without copying: *dst aliases the
// input, or, for a string with escapes or invalid UTF-8, its decoded form
// appended to *buf. It is valid only while neither the input nor *buf is
// written again: for text the caller copies at once (a stream's delta,
// appended to the message), so a text delta costs no allocation. The
// caller empties *buf before each value it decodes, not between the
// strings of one value (a view into the old array stays intact when an
// append moves *buf).
func (s *Scanner) View(dst *string, buf *[]byte) bool {
	j := ViewAt(s.b, s.i, dst, buf)
	if j < 0 {
		return false
	}
	s.i = j
	return true
}

// AppendUnquoted appends raw, a string's bytes between its quotes as Str
// returns them, with its escapes decoded as Unquote does. The result is at
// most len(raw) bytes longer than out.
func AppendUnquoted(out, raw []byte) []byte { return appendUnquoted(out, raw) }

// appendUnquoted appends raw with its escapes decoded (see Unquote).
func appendUnquoted(out, raw []byte) []byte {
	for i := 0; i < len(raw); {
		// Plain ASCII in runs: most of a text is between its escapes.
		j := asciiRun(raw, i)
		out = append(out, raw[i:j]...)
		if i = j; i == len(raw) {
			break
		}
		c := raw[i]
		switch {
		case c == '\\':
			e := raw[i+1]
			i += 2
			switch e {
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
				r := hex4(raw[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if r2 := hex4(raw[i+2:]); r2 >= 0 {
							if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
								out = utf8.AppendRune(out, d)
								i += 6
								continue
							}
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
			default: // '"', '\\', '/'
				out = append(out, e)
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, unicode.ReplacementChar)
			} else {
				out = append(out, raw[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat reads num, a number numberAt accepted, when it has no
// exponent and at most 15 significant digits, which cover the costs a
// session file holds: its digits as an integer and the power of ten it
// is divided by are both exact as float64, so one division, rounded as
// IEEE 754 rounds, is the nearest float64, as strconv.ParseFloat finds
// it by the same rule on its own fast path (without its general reader's
// cost, which was a fiftieth of a long session's load). ok is false for
// anything else.
func exactFloat(num []byte) (f float64, ok bool) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	var mant uint64
	nd, frac := 0, -1 // digits read; digits after the point, -1 before it
	for _, c := range num {
		switch {
		case c == '.':
			frac = 0
			continue
		case c < '0' || c > '9':
			return 0, false // an exponent
		}
		if mant == 0 && c == '0' {
			// Leading zeros are not significant.
		} else if nd++; nd > 15 {
			return 0, false
		}
		mant = mant*10 + uint64(c-'0')
		if frac >= 0 {
			frac++
		}
	}
	f = float64(mant)
	if frac > 0 {
		if frac >= len(pow10) {
			return 0, false
		}
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}
