package markdown

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rally-agent/rally/internal/termsafe"
)

// The inline parser: CommonMark's inline rules for what the UI shows
// (emphasis and strong emphasis by the delimiter-run algorithm, code
// spans, links and images inline or by reference, autolinks, raw HTML
// kept as text, backslash escapes, character references, hard and soft
// line breaks). Named character references are resolved by the standard
// library's html package, whose table is built on first use.

type nodeKind uint8

const (
	nText nodeKind = iota
	nCode
	nEmph
	nStrong
	nLink
	nImage
	nAutolink
	nHTML
	nSoftBreak
	nHardBreak
)

// node is one inline: a linked list of siblings, a container's children
// from first.
type node struct {
	kind       nodeKind
	text       string // text, code, HTML, an autolink's address
	dest       string // link and image destination
	first      *node
	prev, next *node
}

// delim is a run of '*' or '_' that may open or close emphasis.
type delim struct {
	n               *node // the text node holding the run
	ch              byte
	count, orig     int
	canOpen, closes bool
	prev, next      *delim
}

// bracket is an opening "[" or "![" waiting for its "]".
type bracket struct {
	n      *node
	image  bool
	active bool
	pos    int    // where the link text starts in the source
	delims *delim // the delimiter stack's top when it opened
	prev   *bracket
}

type inlineParser struct {
	src        string
	refs       map[string]string
	head, tail *node
	delims     *delim
	brackets   *bracket
	text       strings.Builder // pending text not yet in a node
	ends       tagEnds
}

// parseInline parses src's inlines into a list of nodes.
func parseInline(src string, refs map[string]string) *node {
	p := &inlineParser{src: src, refs: refs}
	for i := 0; i < len(src); {
		i = p.step(i)
	}
	p.flush()
	p.emphasis(nil)
	return p.head
}

func (p *inlineParser) append(n *node) {
	n.prev = p.tail
	if p.tail == nil {
		p.head = n
	} else {
		p.tail.next = n
	}
	p.tail = n
}

func (p *inlineParser) flush() {
	if p.text.Len() > 0 {
		p.append(&node{kind: nText, text: p.text.String()})
		p.text.Reset()
	}
}

func (p *inlineParser) push(kind nodeKind, text string) *node {
	p.flush()
	n := &node{kind: kind, text: text}
	p.append(n)
	return n
}

func (p *inlineParser) step(i int) int {
	s := p.src
	c := s[i]
	switch c {
	case '\\':
		if isEscape(s, i) {
			p.text.WriteByte(s[i+1])
			return i + 2
		}
		if i+1 < len(s) && s[i+1] == '\n' {
			p.push(nHardBreak, "")
			return skipSpaces(s, i+2)
		}
	case '`':
		return p.codeSpan(i)
	case '*', '_':
		return p.delimRun(i)
	case '!':
		if i+1 < len(s) && s[i+1] == '[' {
			n := p.push(nText, "![")
			p.brackets = &bracket{n: n, image: true, active: true, pos: i + 2, delims: p.delims, prev: p.brackets}
			return i + 2
		}
	case '[':
		n := p.push(nText, "[")
		p.brackets = &bracket{n: n, active: true, pos: i + 1, delims: p.delims, prev: p.brackets}
		return i + 1
	case ']':
		return p.closeBracket(i)
	case '<':
		if n := autolink(s[i:]); n > 0 {
			p.push(nAutolink, s[i+1:i+n-1])
			return i + n
		}
		if n := htmlTag(s[i:], &p.ends); n > 0 {
			p.push(nHTML, s[i:i+n])
			return i + n
		}
	case '&':
		if v, n := entity(s[i:]); n > 0 {
			p.text.WriteString(v)
			return i + n
		}
	case '\n':
		t := p.text.String()
		trimmed := strings.TrimRight(t, " ")
		hard := len(t)-len(trimmed) >= 2
		if len(trimmed) < len(t) {
			p.text.Reset()
			p.text.WriteString(trimmed)
		}
		if hard {
			p.push(nHardBreak, "")
		} else {
			p.push(nSoftBreak, "")
		}
		return skipSpaces(s, i+1)
	}
	p.text.WriteByte(c)
	return i + 1
}

// skipSpaces skips the spaces and tabs from i.
func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// skipWS skips CommonMark's white space between the parts of a link,
// a reference definition or a tag: spaces and tabs, and at most one
// line break among them.
func skipWS(s string, i int) int {
	i = skipSpaces(s, i)
	if i < len(s) && s[i] == '\n' {
		i = skipSpaces(s, i+1)
	}
	return i
}

// isEscape reports whether a backslash escape is at i: a backslash
// before ASCII punctuation, which stands for the punctuation. Before
// anything else a backslash is itself.
func isEscape(s string, i int) bool {
	return s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1])
}

// codeSpan reads a code span opened by a run of backticks at i; with no
// closing run of the same length the run is text.
func (p *inlineParser) codeSpan(i int) int {
	s := p.src
	n := runLen(s, i)
	for j := i + n; j < len(s); {
		k := strings.IndexByte(s[j:], '`')
		if k < 0 {
			break
		}
		j += k
		m := runLen(s, j)
		if m == n {
			body := strings.ReplaceAll(s[i+n:j], "\n", " ")
			if len(body) >= 2 && body[0] == ' ' && body[len(body)-1] == ' ' && strings.Trim(body, " ") != "" {
				body = body[1 : len(body)-1]
			}
			p.push(nCode, body)
			return j + m
		}
		j += m
	}
	p.text.WriteString(s[i : i+n])
	return i + n
}

func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == s[i] {
		n++
	}
	return n
}

// delimRun pushes a run of '*' or '_' with whether it can open or close
// emphasis (CommonMark's left- and right-flanking rules).
func (p *inlineParser) delimRun(i int) int {
	s := p.src
	c := s[i]
	n := runLen(s, i)
	before, after := ' ', ' ' // the line's ends count as white space
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if i+n < len(s) {
		after, _ = utf8.DecodeRuneInString(s[i+n:])
	}
	left := !unicode.IsSpace(after) && (!isPunct(after) || unicode.IsSpace(before) || isPunct(before))
	right := !unicode.IsSpace(before) && (!isPunct(before) || unicode.IsSpace(after) || isPunct(after))
	open, closes := left, right
	if c == '_' {
		open = left && (!right || isPunct(before))
		closes = right && (!left || isPunct(after))
	}
	nd := p.push(nText, s[i:i+n])
	d := &delim{n: nd, ch: c, count: n, orig: n, canOpen: open, closes: closes, prev: p.delims}
	if p.delims != nil {
		p.delims.next = d
	}
	p.delims = d
	return i + n
}

func (p *inlineParser) removeDelim(d *delim) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		p.delims = d.prev
	}
}

func (p *inlineParser) unlink(n *node) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		p.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		p.tail = n.prev
	}
}

// emphasis matches the delimiter runs above bottom into emphasis nodes
// (CommonMark's "process emphasis"), then drops them from the stack.
func (p *inlineParser) emphasis(bottom *delim) {
	// openersBottom, by closer kind ('*' or '_', can it open, length
	// mod 3): where the last search for an opener stopped.
	var openersBottom [2][2][3]*delim
	var closer *delim
	if bottom == nil {
		closer = p.delims
		for closer != nil && closer.prev != nil {
			closer = closer.prev
		}
	} else {
		closer = bottom.next
	}
	for closer != nil {
		if !closer.closes {
			closer = closer.next
			continue
		}
		ci, oi := 0, 0
		if closer.ch == '_' {
			ci = 1
		}
		if closer.canOpen {
			oi = 1
		}
		ob := &openersBottom[ci][oi][closer.orig%3]
		var opener *delim
		for d := closer.prev; d != nil && d != bottom && d != *ob; d = d.prev {
			if d.ch == closer.ch && d.canOpen {
				odd := (d.closes || closer.canOpen) && (d.orig+closer.orig)%3 == 0 && !(d.orig%3 == 0 && closer.orig%3 == 0)
				if !odd {
					opener = d
					break
				}
			}
		}
		if opener == nil {
			*ob = closer.prev
			next := closer.next
			if !closer.canOpen {
				p.removeDelim(closer)
			}
			closer = next
			continue
		}
		use := 1
		kind := nEmph
		if opener.count >= 2 && closer.count >= 2 {
			use, kind = 2, nStrong
		}
		opener.count -= use
		closer.count -= use
		opener.n.text = opener.n.text[:opener.count]
		closer.n.text = closer.n.text[:closer.count]
		// The nodes between the two runs become the emphasis's children.
		em := &node{kind: kind}
		if first := opener.n.next; first != closer.n {
			last := closer.n.prev
			em.first = first
			first.prev = nil
			last.next = nil
		}
		opener.n.next, em.prev = em, opener.n
		em.next, closer.n.prev = closer.n, em
		for d := opener.next; d != closer; d = d.next {
			p.removeDelim(d)
		}
		if opener.count == 0 {
			p.unlink(opener.n)
			p.removeDelim(opener)
		}
		if closer.count == 0 {
			next := closer.next
			p.unlink(closer.n)
			p.removeDelim(closer)
			closer = next
		}
	}
	for d := p.delims; d != nil && d != bottom; d = d.prev {
		p.removeDelim(d)
	}
}

// closeBracket handles a "]": a link or image when an inline destination
// or a known reference follows, else text.
func (p *inlineParser) closeBracket(i int) int {
	b := p.brackets
	if b == nil {
		p.text.WriteByte(']')
		return i + 1
	}
	p.brackets = b.prev
	if !b.active {
		p.text.WriteByte(']')
		return i + 1
	}
	dest, end, ok := p.linkAfter(i, b)
	if !ok {
		p.text.WriteByte(']')
		return i + 1
	}
	p.flush()
	p.emphasis(b.delims)
	link := b.n
	link.kind, link.text, link.dest = nLink, "", dest
	if b.image {
		link.kind = nImage
	}
	if kids := link.next; kids != nil {
		kids.prev = nil
		link.first = kids
		link.next = nil
	}
	p.tail = link
	if !b.image { // no link inside a link
		for o := p.brackets; o != nil; o = o.prev {
			if !o.image {
				o.active = false
			}
		}
	}
	return end
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

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isPunct is CommonMark's Unicode punctuation: punctuation or symbol.
func isPunct(r rune) bool {
	if r < 0x80 {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// plainText is the text of n's list, without styles (an image's
// description).
func plainText(n *node) string {
	var b strings.Builder
	for ; n != nil; n = n.next {
		switch n.kind {
		case nSoftBreak, nHardBreak:
			b.WriteByte(' ')
		default:
			b.WriteString(n.text)
			b.WriteString(plainText(n.first))
		}
	}
	return b.String()
}
