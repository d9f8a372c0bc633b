package jsonscan

// The scanner's reads in position-passing form: each function takes the
// input and a position and returns the position after what it read, or -1
// when the input there is not what it reads. A decoder written with them
// keeps its position in a register; the Scanner keeps it in a field,
// stored and loaded again around every call, which was a quarter of a
// chunk's decoding (the loads and stores of Peek's white-space check).
// They validate exactly as the Scanner does; its Str and Skip are built
// on them, so there is one rule for each token.

import (
	"unicode/utf8"
	"unsafe"
)

// WS returns the position of the first byte at or after i that is not
// JSON white space.
func WS(b []byte, i int) int {
	// Providers send compact JSON: nearly every call finds a token at
	// once, which the first comparison tells.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// QuotedAt reads the string token that starts at b[i] (a quote: no white
// space is skipped) and returns the position after its closing quote and
// whether it has escapes; the string's bytes are b[i+1:end-1]. end is -1
// for anything that is not a valid string.
func QuotedAt(b []byte, i int) (end int, esc bool) {
	end, esc, _ = quotedAt(b, i)
	return end, esc
}

// quotedAt is QuotedAt, also reporting whether a byte of the string is
// past ASCII (see plainHigh); an escape's bytes are not looked at, since
// an escaped string is decoded anyway.
func quotedAt(b []byte, i int) (end int, esc, high bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false, false
	}
	for j := i + 1; j < len(b); j++ {
		var h bool
		j, h = plainHigh(b, j)
		high = high || h
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, high
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return -1, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || hex4(b[j+1:j+5]) < 0 {
					return -1, false, false
				}
				j += 4
			default:
				return -1, false, false
			}
		case c < 0x20:
			return -1, false, false
		}
	}
	return -1, false, false
}

// asIs reports whether a string's raw bytes, read by quotedAt, are its
// Go text as they stand: no escapes, and valid UTF-8, which only a string
// with a byte past ASCII needs checked.
func asIs(raw []byte, esc, high bool) bool { return !esc && (!high || utf8.Valid(raw)) }

// KeyAt reads an object key the fast decoders may compare exactly
// (unescaped lowercase ASCII, digits and underscores: encoding/json
// matches keys case-insensitively, so anything else is left to it), with
// the white space around it and its colon. It returns the key and the
// position of its value, after white space; next is -1 for anything
// else.
func KeyAt(b []byte, i int) (key []byte, next int) {
	i = WS(b, i)
	if i >= len(b) || b[i] != '"' {
		return nil, -1
	}
	// One pass: a key is its accepted bytes up to the closing quote. Any
	// other byte (an escape, a capital, a control byte) fails here, as
	// the string it would start does.
	j := i + 1
	for j < len(b) && keyByte[b[j]] {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return nil, -1
	}
	key = b[i+1 : j]
	j = WS(b, j+1)
	if j >= len(b) || b[j] != ':' {
		return nil, -1
	}
	return key, WS(b, j+1)
}

// NullAt reads a null literal at b[i], after white space.
func NullAt(b []byte, i int) int {
	i = WS(b, i)
	if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
		return i + 4
	}
	return -1
}

// SkipAt reads any one value at b[i], after white space, validating it.
// Values nested deeper than maxDepth are refused.
func SkipAt(b []byte, i int) int { return skipAt(b, i, 0) }

func skipAt(b []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = WS(b, i)
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		end, _ := QuotedAt(b, i)
		return end
	case '{':
		i = WS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			end, _ := QuotedAt(b, i)
			if end < 0 {
				return -1
			}
			if i = WS(b, end); i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = skipAt(b, i+1, depth+1); i < 0 {
				return -1
			}
			if i = WS(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = WS(b, i+1)
			case '}':
				return i + 1
			default:
				return -1
			}
		}
	case '[':
		i = WS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = skipAt(b, i, depth+1); i < 0 {
				return -1
			}
			if i = WS(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i++
			case ']':
				return i + 1
			default:
				return -1
			}
		}
	case 't':
		return litAt(b, i, "true")
	case 'f':
		return litAt(b, i, "false")
	case 'n':
		return litAt(b, i, "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return numberAt(b, i)
		}
	}
	return -1
}

func litAt(b []byte, i int, l string) int {
	if len(b)-i >= len(l) && string(b[i:i+len(l)]) == l {
		return i + len(l)
	}
	return -1
}

// numberAt reads a number at b[i]:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func numberAt(b []byte, j int) int {
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		j = digits(b, j)
	default:
		return -1
	}
	if j < len(b) && b[j] == '.' {
		k := digits(b, j+1)
		if k == j+1 {
			return -1
		}
		j = k
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := digits(b, j)
		if k == j {
			return -1
		}
		j = k
	}
	return j
}

// IntAt reads an integer at b[i], after white space, as Scanner.Int does
// (null reads as 0; fractions, exponents and numbers of more than 15
// digits are refused, for encoding/json to decide).
func IntAt(b []byte, i int) (n, next int) {
	j := WS(b, i)
	if k := litAt(b, j, "null"); k >= 0 {
		return 0, k
	}
	neg := false
	if j < len(b) && b[j] == '-' {
		neg = true
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		n = n*10 + int(b[j]-'0')
		j++
	}
	d := j - start
	if d == 0 || d > 15 || d > 1 && b[start] == '0' {
		return 0, -1
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, -1
	}
	if neg {
		n = -n
	}
	return n, j
}

// ViewAt is Scanner.View at b[i], after white space: it reads a string or
// null and returns the position after it, or -1.
func ViewAt(b []byte, i int, dst *string, buf *[]byte) int {
	i = WS(b, i)
	if j := litAt(b, i, "null"); j >= 0 {
		return j
	}
	end, esc, high := quotedAt(b, i)
	if end < 0 {
		return -1
	}
	raw := b[i+1 : end-1]
	switch {
	case len(raw) == 0:
		*dst = ""
	case asIs(raw, esc, high):
		*dst = unsafe.String(&raw[0], len(raw))
	default:
		start := len(*buf)
		*buf = appendUnquoted(*buf, raw)
		if v := (*buf)[start:]; len(v) > 0 {
			*dst = unsafe.String(&v[0], len(v))
		} else {
			*dst = ""
		}
	}
	return end
}
