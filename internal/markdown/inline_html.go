package markdown

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rally-agent/rally/internal/termsafe"
)

// HTML in inline text: character references, autolinks and raw HTML
// (shown as text, so only where it ends matters).

// entity reads a character reference (&name;, &#123; or &#x7B;) and
// returns what it stands for and its length, or 0 when s has none. What
// it stands for goes through termsafe as the raw text did: &#27; must not
// bring back the ESC that cleaning took out of the text.
func entity(s string) (string, int) {
	end := strings.IndexByte(s[:min(len(s), 34)], ';') // the longest reference; not the whole rest at every &
	if end < 2 {
		return "", 0
	}
	name := s[1:end]
	if name[0] == '#' {
		num := name[1:]
		base, max := 10, 7
		if num != "" && (num[0] == 'x' || num[0] == 'X') {
			num, base, max = num[1:], 16, 6
		}
		if num == "" || len(num) > max {
			return "", 0
		}
		v := 0
		for k := 0; k < len(num); k++ {
			d := hexVal(num[k])
			if d < 0 || d >= base {
				return "", 0
			}
			v = v*base + d
		}
		if v == 0 || v > unicode.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			v = utf8.RuneError
		}
		return termsafe.String(string(rune(v))), end + 1
	}
	for k := 0; k < len(name); k++ {
		if !isLetter(name[k]) && !isDigit(name[k]) {
			return "", 0
		}
	}
	// html.UnescapeString also decodes a legacy name at the start of a
	// longer one ("&notit;" is "¬it;" to it), which CommonMark does not:
	// only a whole name and its ";" are a reference. A whole name stands
	// for one or two code points; a prefix leaves at least the rest of the
	// name and the ";" as they were, and an unknown name all of itself.
	if v := html.UnescapeString(s[:end+1]); utf8.RuneCountInString(v) <= 2 {
		return termsafe.String(v), end + 1
	}
	return "", 0
}

func hexVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

// autolink returns the length of the <scheme:address> or <email> s
// starts with, or 0.
func autolink(s string) int {
	// The body ends at the first byte it may not hold: searching for '>'
	// alone read the whole rest of the text at every '<'.
	end := strings.IndexAny(s[1:], " <>\t\n") + 1
	if end < 3 || s[end] != '>' {
		return 0
	}
	body := s[1:end]
	if c := strings.IndexByte(body, ':'); c >= 2 && c <= 32 && isLetter(body[0]) {
		ok := true
		for k := 1; k < c; k++ {
			ch := body[k]
			if !isLetter(ch) && !isDigit(ch) && ch != '+' && ch != '.' && ch != '-' {
				ok = false
			}
		}
		if ok {
			return end + 1
		}
	}
	if at := strings.IndexByte(body, '@'); at > 0 && at < len(body)-1 && !strings.ContainsAny(body, `\:`) {
		return end + 1
	}
	return 0
}

// tagEnds remembers, for each end htmlTag searches for, the longest rest
// of the text that end was not found in: it is in no shorter rest either.
// So a text of many "<!--" and no "-->" is searched once, not once per
// "<!--", which made an answer of them cost the square of its size.
type tagEnds [6]int

// The ends htmlTag searches for.
const (
	endComment = iota // "-->"
	endPI             // "?>"
	endCDATA          // "]]>"
	endDecl           // ">"
	endQuote          // an attribute value's closing quote: 'q' is +1
)

// index is strings.Index(s, end), answered from m where it can be.
func (m *tagEnds) index(s, end string, kind int) int {
	if m != nil && len(s) <= m[kind] {
		return -1
	}
	e := strings.Index(s, end)
	if e < 0 && m != nil {
		m[kind] = max(m[kind], len(s))
	}
	return e
}

// htmlTag returns the length of the raw HTML tag, comment, processing
// instruction or declaration s starts with, or 0. It is shown as text,
// so what matters is only where it ends: inside it no Markdown applies.
// m, when not nil, is the searches' memory for one text that s is a rest
// of.
func htmlTag(s string, m *tagEnds) int {
	switch {
	case strings.HasPrefix(s, "<!--"):
		if strings.HasPrefix(s, "<!-->") {
			return 5
		}
		if strings.HasPrefix(s, "<!--->") {
			return 6
		}
		if e := m.index(s[4:], "-->", endComment); e >= 0 {
			return 4 + e + 3
		}
		return 0
	case strings.HasPrefix(s, "<?"):
		if e := m.index(s[2:], "?>", endPI); e >= 0 {
			return 2 + e + 2
		}
		return 0
	case strings.HasPrefix(s, "<![CDATA["):
		if e := m.index(s[9:], "]]>", endCDATA); e >= 0 {
			return 9 + e + 3
		}
		return 0
	case len(s) > 2 && s[1] == '!' && isLetter(s[2]):
		if e := m.index(s[3:], ">", endDecl); e >= 0 {
			return 3 + e + 1
		}
		return 0
	}
	i := 1
	closing := i < len(s) && s[i] == '/'
	if closing {
		i++
	}
	if i >= len(s) || !isLetter(s[i]) {
		return 0
	}
	for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '-') {
		i++
	}
	if closing {
		i = skipWS(s, i)
		if i < len(s) && s[i] == '>' {
			return i + 1
		}
		return 0
	}
	// Attributes: name, optionally = and a value, each after white space.
	for {
		j := skipWS(s, i)
		if j < len(s) && s[j] == '>' {
			return j + 1
		}
		if j+1 < len(s) && s[j] == '/' && s[j+1] == '>' {
			return j + 2
		}
		if j == i || j >= len(s) || !(isLetter(s[j]) || s[j] == '_' || s[j] == ':') {
			return 0
		}
		for j < len(s) && (isLetter(s[j]) || isDigit(s[j]) || strings.IndexByte("_.:-", s[j]) >= 0) {
			j++
		}
		k := skipWS(s, j)
		if k < len(s) && s[k] == '=' {
			k = skipWS(s, k+1)
			if k >= len(s) {
				return 0
			}
			switch q := s[k]; q {
			case '"', '\'':
				kind := endQuote
				if q == '\'' {
					kind++
				}
				e := m.index(s[k+1:], string(q), kind)
				if e < 0 {
					return 0
				}
				j = k + 1 + e + 1
			default:
				e := k
				for e < len(s) && strings.IndexByte(" \t\n\"'=<>`", s[e]) < 0 {
					e++
				}
				if e == k {
					return 0
				}
				j = e
			}
		}
		i = j
	}
}
