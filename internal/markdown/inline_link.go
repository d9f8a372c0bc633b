package markdown

import "strings"

// Links: reference definitions, what follows a link text's "]", and the
// labels, destinations and titles both are made of.

// refDefs reads the link reference definitions a paragraph's text
// starts with into p.refs and returns how many lines they take. One
// definition may take any number of lines (its label and its title may
// each span lines; only a blank line, which ends the paragraph, may not be
// in one), so src is the whole paragraph, joined once: joining lines per
// definition would cost a paragraph of definitions the square of its size.
func (p *blockParser) refDefs(src string) int {
	n := 0
	for off := 0; off < len(src) && src[off] == '['; {
		label, dest, end := refDef(src[off:])
		if end == 0 {
			break
		}
		if _, dup := p.refs[label]; !dup { // the first definition wins
			p.refs[label] = dest
		}
		n += strings.Count(src[off:off+end], "\n") + 1
		off += end + 1 // past the line break after it
	}
	return n
}

// refDef reads the link reference definition src starts with: [label]:
// destination, optionally a title, each part after white space that may
// hold one line break, and nothing but spaces after the title (or, with
// no title, after the destination) on its line. It returns where that
// line ends, or 0 when src starts with no definition.
func refDef(src string) (label, dest string, end int) {
	e := linkLabelEnd(src, 0)
	if e < 0 || e+1 >= len(src) || src[e+1] != ':' {
		return "", "", 0
	}
	label = normLabel(src[1:e])
	if label == "" {
		return "", "", 0
	}
	i := skipWS(src, e+2)
	d, dn, ok := linkDest(src[i:])
	if !ok || (dn == 0 && !strings.HasPrefix(src[i:], "<")) {
		return "", "", 0
	}
	i += dn
	if j := skipWS(src, i); j > i && j < len(src) {
		if tn, ok := linkTitle(src[j:]); ok {
			if end := lineEnd(src, j+tn); isBlank(src[j+tn : end]) {
				return label, d, end
			}
		}
	}
	// No title, or one with more after it on its line: the definition
	// ends with the destination if its line does.
	if end := lineEnd(src, i); isBlank(src[i:end]) {
		return label, d, end
	}
	return "", "", 0
}

// lineEnd is the index of the line break after i in s, or len(s).
func lineEnd(s string, i int) int {
	if e := strings.IndexByte(s[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(s)
}

// linkAfter reads what follows the "]" at i: an inline "(dest title)",
// a reference "[label]", "[]" or nothing (the text is the label).
func (p *inlineParser) linkAfter(i int, b *bracket) (dest string, end int, ok bool) {
	s := p.src
	if i+1 < len(s) && s[i+1] == '(' {
		j := skipWS(s, i+2)
		d, n, ok := linkDest(s[j:])
		if ok {
			j += n
			k := skipWS(s, j)
			if k > j && k < len(s) && s[k] != ')' {
				if tn, ok := linkTitle(s[k:]); ok {
					k = skipWS(s, k+tn)
				}
			}
			if k < len(s) && s[k] == ')' {
				return d, k + 1, true
			}
		}
	}
	if len(p.refs) == 0 {
		return "", 0, false
	}
	label := s[b.pos:i]
	if len(label) > 999 { // CommonMark's longest label: a longer one, at every ], was quadratic
		return "", 0, false
	}
	end = i + 1
	if i+1 < len(s) && s[i+1] == '[' {
		if e := linkLabelEnd(s, i+1); e >= 0 {
			if e > i+2 {
				label = s[i+2 : e]
			}
			end = e + 1
		}
	}
	d, ok := p.refs[normLabel(label)]
	return d, end, ok
}

// linkLabelEnd returns the index of the "]" closing the label whose "["
// is at i, or -1.
func linkLabelEnd(s string, i int) int {
	for j := i + 1; j < len(s) && j-i <= 1000; j++ {
		switch {
		case isEscape(s, j):
			j++
		case s[j] == '[':
			return -1
		case s[j] == ']':
			return j
		}
	}
	return -1
}

// normLabel folds a reference label's case and white space, so that
// [Foo  Bar] finds [foo bar].
func normLabel(s string) string {
	return strings.ToLower(strings.ToUpper(strings.Join(strings.Fields(s), " ")))
}

// linkDest reads a link destination: <...>, or a run without spaces
// whose parentheses balance. It returns the destination unescaped.
func linkDest(s string) (string, int, bool) {
	if strings.HasPrefix(s, "<") {
		for j := 1; j < len(s); j++ {
			switch {
			case isEscape(s, j):
				j++
			case s[j] == '\n' || s[j] == '<':
				return "", 0, false
			case s[j] == '>':
				return unescape(s[1:j]), j + 1, true
			}
		}
		return "", 0, false
	}
	depth := 0
	j := 0
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case isEscape(s, j):
			j++
		case c == '(':
			depth++
			if depth > 32 {
				return "", 0, false
			}
		case c == ')':
			if depth == 0 {
				return unescape(s[:j]), j, true
			}
			depth--
		case c <= ' ' || c == 0x7f:
			if depth != 0 {
				return "", 0, false
			}
			return unescape(s[:j]), j, true
		}
	}
	if depth != 0 {
		return "", 0, false
	}
	return unescape(s[:j]), j, true
}

// linkTitle returns the length of the "title", 'title' or (title) s
// starts with.
func linkTitle(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	closeCh := s[0]
	switch closeCh {
	case '"', '\'':
	case '(':
		closeCh = ')'
	default:
		return 0, false
	}
	for j := 1; j < len(s); j++ {
		switch {
		case isEscape(s, j):
			j++
		case s[j] == closeCh:
			return j + 1, true
		case s[0] == '(' && s[j] == '(':
			return 0, false
		}
	}
	return 0, false
}

// unescape resolves backslash escapes and character references.
func unescape(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case isEscape(s, i):
			i++
			b.WriteByte(s[i])
		case s[i] == '&':
			if v, n := entity(s[i:]); n > 0 {
				b.WriteString(v)
				i += n - 1
				continue
			}
			b.WriteByte('&')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
