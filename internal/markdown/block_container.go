package markdown

import "strings"

// Containers: block quotes and list items, whose content a parser of
// its own reads from a source of the container's lines.

// source is a container's lines, its markers stripped, found as its
// parser asks for them. A line without the container's marker (or, in a
// list item, its indent) still belongs to it when it continues a
// paragraph open at the end of the container's content: a lazy line.
// Whether one is open there only the parse of that content can tell, so
// such a line is added marked lazy, and parseNested ends the container
// before it when no paragraph is open to take it. A lazy line opens no
// block (lazyText), so only the readers that take lines without
// classifying them (code, HTML) stop at one themselves; a container
// inside this one takes it as lazy too, for its own paragraph. Found as
// they are asked for, a container's lines are read once: read to its
// end first, every container cut short by a lazy line would have read
// the rest of the text for nothing.
type source struct {
	text []string
	lazy []bool // nil until a line is lazy (for a document, always)
	// Where a container's lines come from: its parent's lines (nil for a
	// document, whose lines are all there), the next of them to look at,
	// and whose lines they are (bQuote, or bItem marked by mark).
	from  *source
	at    int
	kind  blockKind
	mark  marker
	ended bool // no more lines: the container, or the document, ended
	// blankEnd: an item ended at blank lines, which at has passed.
	blankEnd bool
}

func (s *source) has(j int) bool {
	for j >= len(s.text) && !s.ended {
		s.ended = !s.next()
	}
	return j < len(s.text)
}

func (s *source) isLazy(j int) bool { return j < len(s.lazy) && s.lazy[j] }

func (s *source) add(ln string, lazy bool) {
	if lazy && s.lazy == nil {
		s.lazy = make([]bool, len(s.text), cap(s.text)+1)
	}
	s.text = append(s.text, ln)
	if s.lazy != nil {
		s.lazy = append(s.lazy, lazy)
	}
}

// next adds the container's next line and reports whether there was one.
func (s *source) next() bool {
	if s.from == nil || !s.from.has(s.at) {
		return false
	}
	if s.kind == bQuote {
		return s.nextQuoted()
	}
	return s.nextOfItem()
}

// nextQuoted adds a quote's next line: one with its marker, stripped of
// it, or a lazy line as it is.
func (s *source) nextQuoted() bool {
	ln := s.from.text[s.at]
	switch {
	case isQuoteMarked(ln): // never a line lazy for an outer container: that opens no quote
		s.add(stripQuoteMarker(ln), false)
	case s.from.isLazy(s.at) || lazyText(ln):
		s.add(ln, true)
	default:
		return false
	}
	s.at++
	return true
}

// nextOfItem adds an item's next line: one indented to its content,
// stripped of that indent, a lazy line as it is, or the blank lines
// before one indented to its content.
func (s *source) nextOfItem() bool {
	ln := s.from.text[s.at]
	switch {
	case isBlank(ln):
		// Blank lines the item does not go on after are not its, and an
		// item may start with one blank line, not two; its list may go
		// on after them.
		k := s.from.blankRun(s.at)
		if (len(s.text) == 1 && isBlank(s.text[0])) || !s.from.indentedTo(k, s.mark.indent) {
			s.at, s.blankEnd = k, true
			return false
		}
		for ; s.at < k; s.at++ {
			s.add("", false)
		}
		return true
	case s.from.indentedTo(s.at, s.mark.indent):
		s.add(stripCols(ln, s.mark.indent), false)
	case s.from.isLazy(s.at) || lazyText(ln):
		s.add(ln, true)
	default:
		return false
	}
	s.at++
	return true
}

// indentedTo reports whether line k is indented by cols or more (to an
// item's content, so in the item even after blank lines) and not lazy.
func (s *source) indentedTo(k, cols int) bool {
	if !s.has(k) || s.isLazy(k) {
		return false
	}
	ind, _ := indentOf(s.text[k])
	return ind >= cols
}

// blankRun returns the line after the blank lines from j.
func (s *source) blankRun(j int) int {
	for s.has(j) && isBlank(s.text[j]) {
		j++
	}
	return j
}

// lazyText reports whether ln, lacking a container's marker, may be a
// lazy line (CommonMark's lazy continuation line): it is not blank and
// opens no block where the container is, outside its paragraph. So a
// setext underline is text there (it would be the paragraph's), and any
// list item opens a list (the rules for interrupting a paragraph are for
// a line inside it); an HTML tag alone on its line never interrupts one.
func lazyText(ln string) bool {
	o := classify(ln, false)
	return o.kind == lText || o.kind == lIndented || (o.kind == lHTML && o.html == 7)
}

// quote reads a block quote from line i.
func (p *blockParser) quote(i int) int {
	kids, n := parseNested(&source{from: p.src, at: i, kind: bQuote}, p.refs, p.depth+1)
	p.add(&block{kind: bQuote, kids: kids, first: i, last: i + n - 1})
	return i + n
}

// isQuoteMarked reports whether ln has a block quote's marker.
func isQuoteMarked(ln string) bool {
	ind, n := indentOf(ln)
	return ind < 4 && n < len(ln) && ln[n] == '>'
}

// stripQuoteMarker is ln after its block quote marker and the space or
// tab after it.
func stripQuoteMarker(ln string) string {
	rest := strings.TrimLeft(ln, " \t")[1:]
	switch {
	case strings.HasPrefix(rest, " "):
		rest = rest[1:]
	case strings.HasPrefix(rest, "\t"):
		rest = "  " + rest[1:] // the tab's columns after the one the marker takes
	}
	return rest
}

// list collects the items of one list, the first marked by first at
// line i: same bullet, or same delimiter.
func (p *blockParser) list(i int, first marker) int {
	l := &block{kind: bList, ordered: first.ordered, start: first.num, tight: true, first: i}
	m, j := first, i
	for {
		item, next, blankEnd := p.item(j, m)
		l.kids = append(l.kids, item)
		l.last = item.last
		if !item.tight {
			l.tight = false
		}
		j = next
		var ok bool
		if m, ok = p.nextItem(j, first.ch); !ok {
			break
		}
		if blankEnd {
			l.tight = false // a blank line between two items
		}
	}
	p.add(l)
	return j
}

// nextItem returns the marker of the item line j starts when that item
// belongs to a list of ch (a bullet or a delimiter).
func (p *blockParser) nextItem(j int, ch byte) (marker, bool) {
	if !p.src.has(j) {
		return marker{}, false
	}
	o := classify(p.src.text[j], false)
	return o.mark, o.kind == lItem && o.mark.ch == ch
}

// item reads one list item from line i, marked by m. It returns the
// item, the line after it (and after the blank lines it ended with) and
// whether there were some.
func (p *blockParser) item(i int, m marker) (*block, int, bool) {
	src := &source{from: p.src, at: i + 1, kind: bItem, mark: m}
	src.add(m.content, false)
	kids, n := parseNested(src, p.refs, p.depth+1)
	next, blankEnd := src.at, src.blankEnd
	if n < len(src.text) { // it ended before a lazy line
		next, blankEnd = i+n, false
	}
	item := &block{kind: bItem, kids: kids, tight: true, first: i, last: i + n - 1}
	for k := 1; k < len(kids); k++ {
		if kids[k].first > kids[k-1].last+1 {
			item.tight = false // a blank line between two of its blocks
		}
	}
	return item, next, blankEnd
}

// marker is a list item's marker: its kind (the bullet, or the
// delimiter of a number), number, content indent and first line.
type marker struct {
	ch      byte
	ordered bool
	num     int
	indent  int // the columns of the marker and the spaces after it
	content string
}

// listMarker reads the list marker rest, a line after its indent of ind
// columns (below four), starts with.
func listMarker(ind int, s string) (marker, bool) {
	var m marker
	w := 0
	switch {
	case s != "" && (s[0] == '-' || s[0] == '+' || s[0] == '*'):
		m.ch, w = s[0], 1
	default:
		for w < len(s) && w < 9 && s[w] >= '0' && s[w] <= '9' {
			m.num = m.num*10 + int(s[w]-'0')
			w++
		}
		if w == 0 || w >= len(s) || (s[w] != '.' && s[w] != ')') {
			return marker{}, false
		}
		m.ch, m.ordered = s[w], true
		w++
	}
	after := s[w:]
	if after != "" && after[0] != ' ' && after[0] != '\t' {
		return marker{}, false
	}
	sp, sb := indentOf(after)
	switch {
	case isBlank(after):
		m.indent, m.content = ind+w+1, ""
	case sp > 4: // the content is indented code: one space belongs to the marker
		m.indent, m.content = ind+w+1, stripCols(after, 1)
	default:
		m.indent, m.content = ind+w+sp, after[sb:]
	}
	return m, true
}
