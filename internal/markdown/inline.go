package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
