package markdown

import "strings"

// The block parser: CommonMark's block structure, line by line, for what
// a model writes (headings, paragraphs, fenced and indented code, lists,
// block quotes, rules, HTML shown as text, link reference definitions).
// A container's lines are parsed again, their markers stripped, by a
// parser of their own, which keeps each rule in one function; they are
// found as that parser asks for them, since where a container ends
// depends on its content (see source). Nothing here is built before
// Render is called: there are no tables, only code.

type blockKind uint8

const (
	bPara blockKind = iota
	bHeading
	bRule
	bCode
	bQuote
	bList
	bItem
	bHTML
)

// block is one node of the block tree. Paragraph and heading text is
// kept raw and parsed inline when rendered, after the whole document's
// reference definitions are known.
type block struct {
	kind    blockKind
	level   int      // heading level
	info    string   // a fenced code block's info string
	lines   []string // paragraph, heading, code or HTML lines
	kids    []*block // a quote's, list's or item's blocks
	ordered bool     // list
	start   int      // an ordered list's first number
	tight   bool     // list: no blank line between its items or their blocks
	// first and last are the block's line numbers in the lines it was
	// parsed from, to tell where blank lines fall (tight or loose list).
	first, last int
}

// blockParser reads one container's lines into blocks.
type blockParser struct {
	src   *source
	out   []*block
	para  *block // the open paragraph, if any
	refs  map[string]string
	depth int // how many containers this one is inside
}

// maxDepth bounds the nesting of quotes and lists: deeper markers are
// text, so that a hostile answer of a hundred thousand ">" costs a
// hundred thousand characters of work, not their square.
const maxDepth = 32

// parseBlocks parses a container's lines; refs collects the link
// reference definitions (the labels normalised).
func parseBlocks(lines []string, refs map[string]string) []*block {
	b, _ := parseNested(&source{text: lines}, refs, 0)
	return b
}

// parseNested parses a container's lines and returns its blocks and how
// many of its lines they take: all of them, or those before a lazy line
// that finds no paragraph to continue, where the container ends.
func parseNested(src *source, refs map[string]string, depth int) ([]*block, int) {
	p := &blockParser{src: src, refs: refs, depth: depth}
	i := 0
	for src.has(i) {
		if src.isLazy(i) {
			if p.para == nil {
				break
			}
			p.addText(i, strings.TrimLeft(src.text[i], " \t"))
			i++
			continue
		}
		i = p.step(i)
	}
	p.closePara()
	return p.out, i
}

func (p *blockParser) add(b *block) { p.out = append(p.out, b) }

// step reads the block starting at line i and returns the next line.
func (p *blockParser) step(i int) int {
	o := classify(p.src.text[i], p.para != nil)
	// An underline ends a paragraph as a heading before it can be a rule.
	// Under a paragraph of reference definitions only it is no heading's,
	// and it is what it was in the paragraph: "-" is text, not an empty
	// item, as commonmark.js has it.
	if p.para != nil && o.ind < 4 {
		if lvl := setextLevel(o.rest); lvl > 0 && p.setext(lvl, i) {
			return i + 1
		}
	}
	if (o.kind == lQuote || o.kind == lItem) && p.depth >= maxDepth {
		o.kind = lText
	}
	switch o.kind {
	case lBlank:
		p.closePara()
		return i + 1
	case lIndented:
		if p.para == nil {
			return p.indentedCode(i)
		}
	case lText:
	default:
		p.closePara()
		return p.open(i, o)
	}
	p.addText(i, o.rest) // a continuation line loses its indent
	return i + 1
}

// addText adds line i, s, to the open paragraph, opening one if none is.
func (p *blockParser) addText(i int, s string) {
	if p.para == nil {
		p.para = &block{kind: bPara, first: i}
	}
	p.para.lines = append(p.para.lines, s)
	p.para.last = i
}

// open reads the block other than a paragraph or indented code that o,
// line i, opens and returns the line after it.
func (p *blockParser) open(i int, o opener) int {
	switch o.kind {
	case lRule:
		p.add(&block{kind: bRule, first: i, last: i})
		return i + 1
	case lATX:
		p.add(atxHeading(o.rest, o.level, i))
		return i + 1
	case lFence:
		return p.fenced(i, o)
	case lQuote:
		return p.quote(i)
	case lHTML:
		return p.html(i, o.html)
	}
	return p.list(i, o.mark)
}

// closePara ends the open paragraph: its leading reference definitions
// go to refs, and what text is left (if any) is a paragraph.
func (p *blockParser) closePara() {
	b := p.para
	if b == nil {
		return
	}
	p.para = nil
	if strings.HasPrefix(b.lines[0], "[") {
		b.lines = b.lines[p.refDefs(strings.Join(b.lines, "\n")):]
	}
	if len(b.lines) == 0 {
		return
	}
	b.lines[len(b.lines)-1] = strings.TrimRight(b.lines[len(b.lines)-1], " \t")
	p.add(b)
}

// setext turns the open paragraph into a heading underlined at line i;
// false when the paragraph held only reference definitions.
func (p *blockParser) setext(level, i int) bool {
	b := p.para
	p.closePara()
	if len(p.out) == 0 || p.out[len(p.out)-1] != b {
		return false
	}
	b.kind, b.level, b.last = bHeading, level, i
	return true
}

func (p *blockParser) indentedCode(i int) int {
	b := &block{kind: bCode, first: i}
	end := i
	for j := i; p.src.has(j) && !p.src.isLazy(j); j++ {
		ln := p.src.text[j]
		if !isBlank(ln) {
			if ind, _ := indentOf(ln); ind < 4 {
				break
			}
			end = j
		}
	}
	for j := i; j <= end; j++ {
		b.lines = append(b.lines, stripCols(p.src.text[j], 4))
	}
	b.last = end
	p.add(b)
	return end + 1
}

// fenced reads the fenced code block o, line i, opens; one not closed
// runs to the end of its container.
func (p *blockParser) fenced(i int, o opener) int {
	b := &block{kind: bCode, first: i, info: strings.TrimSpace(o.rest[len(o.fence):])}
	j := i + 1
	for ; p.src.has(j) && !p.src.isLazy(j); j++ {
		if fenceCloses(p.src.text[j], o.fence) {
			b.last = j
			p.add(b)
			return j + 1
		}
		b.lines = append(b.lines, stripCols(p.src.text[j], o.ind))
	}
	b.last = j - 1
	p.add(b)
	return j
}

func (p *blockParser) html(i, kind int) int {
	b := &block{kind: bHTML, first: i}
	j := i
	for ; p.src.has(j) && !p.src.isLazy(j); j++ {
		ln := p.src.text[j]
		if kind >= 6 && isBlank(ln) {
			break
		}
		b.lines = append(b.lines, ln)
		if kind <= 5 && htmlEnds(ln, kind, j == i) {
			j++
			break
		}
	}
	b.last = j - 1
	p.add(b)
	return j
}

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
	lazy []bool // nil for a document: no line of it is lazy
	// next adds the container's next line and reports whether there was
	// one; nil once there was not (and for a document).
	next func(*source) bool
}

func (s *source) has(j int) bool {
	for j >= len(s.text) && s.next != nil {
		if !s.next(s) {
			s.next = nil
		}
	}
	return j < len(s.text)
}

func (s *source) isLazy(j int) bool { return j < len(s.lazy) && s.lazy[j] }

func (s *source) add(ln string, lazy bool) {
	s.text = append(s.text, ln)
	s.lazy = append(s.lazy, lazy)
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

// quote reads a block quote from line i: the lines that have its marker,
// stripped of it, and lazy lines as they are.
func (p *blockParser) quote(i int) int {
	j := i // the next of p's lines for the quote to look at
	src := &source{next: func(s *source) bool {
		if !p.src.has(j) {
			return false
		}
		ln := p.src.text[j]
		switch {
		case isQuoteMarked(ln): // never a line lazy for an outer container: that opens no quote
			s.add(stripQuoteMarker(ln), false)
		case p.src.isLazy(j) || lazyText(ln):
			s.add(ln, true)
		default:
			return false
		}
		j++
		return true
	}}
	kids, n := parseNested(src, p.refs, p.depth+1)
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

// item reads one list item from line i, marked by m: the lines indented
// to its content, stripped of that indent, lazy lines as they are, and
// blank lines between them. It returns the item, the line after it (and
// after the blank lines it ended with) and whether there were some.
func (p *blockParser) item(i int, m marker) (*block, int, bool) {
	j := i + 1 // the next of p's lines for the item to look at
	blankEnd := false
	src := &source{next: func(s *source) bool {
		if !p.src.has(j) {
			return false
		}
		ln := p.src.text[j]
		switch {
		case isBlank(ln):
			// Blank lines the item does not go on after are not its, and
			// an item may start with one blank line, not two; its list may
			// go on after them.
			k := p.blankRun(j)
			if (len(s.text) == 1 && isBlank(s.text[0])) || !p.continuesItem(k, m) {
				j, blankEnd = k, true
				return false
			}
			for ; j < k; j++ {
				s.add("", false)
			}
			return true
		case p.continuesItem(j, m):
			s.add(stripCols(ln, m.indent), false)
		case p.src.isLazy(j) || lazyText(ln):
			s.add(ln, true)
		default:
			return false
		}
		j++
		return true
	}}
	src.add(m.content, false)
	kids, n := parseNested(src, p.refs, p.depth+1)
	next := j
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

// continuesItem reports whether line k is indented to the content of
// an item marked by m (and so, after blank lines, still in it).
func (p *blockParser) continuesItem(k int, m marker) bool {
	if !p.src.has(k) || p.src.isLazy(k) {
		return false
	}
	ind, _ := indentOf(p.src.text[k])
	return ind >= m.indent
}

// blankRun returns the line after the blank lines from j.
func (p *blockParser) blankRun(j int) int {
	for p.src.has(j) && isBlank(p.src.text[j]) {
		j++
	}
	return j
}

// lineKind is what a line opens.
type lineKind uint8

const (
	lText     lineKind = iota // paragraph text
	lBlank                    // nothing but spaces and tabs
	lIndented                 // four columns in or more: indented code, or a paragraph's continuation
	lRule
	lATX
	lFence
	lQuote
	lHTML
	lItem
)

// opener is a line classified: the block it opens and what that block
// is built from, so that no block kind tests the line again.
type opener struct {
	kind  lineKind
	ind   int    // the line's indent in columns
	rest  string // the line after its indent
	level int    // lATX: the heading's level
	fence string // lFence: the fence
	html  int    // lHTML: the HTML block's kind, 1–7
	mark  marker // lItem: the list marker
}

// classify finds the block ln opens. inPara applies the rules for
// interrupting a paragraph: an empty list item, an ordered one not from
// 1 and an HTML tag alone on its line (kind 7) cannot, so they are text.
// A setext underline is the paragraph's to tell, not the line's.
func classify(ln string, inPara bool) opener {
	ind, n := indentOf(ln)
	o := opener{ind: ind, rest: ln[n:]}
	switch {
	case o.rest == "":
		o.kind = lBlank
	case ind >= 4:
		o.kind = lIndented
	case isRule(o.rest): // before a list item: "* * *" is a rule
		o.kind = lRule
	case o.rest[0] == '>':
		o.kind = lQuote
	default:
		o.classifyRest(inPara)
	}
	return o
}

// classifyRest finds the blocks an indent below four columns allows
// that the first byte alone does not tell apart.
func (o *opener) classifyRest(inPara bool) {
	if o.level = atxLevel(o.rest); o.level > 0 {
		o.kind = lATX
	} else if o.fence = fenceOpen(o.rest); o.fence != "" {
		o.kind = lFence
	} else if o.html = htmlStart(o.rest, inPara); o.html > 0 {
		o.kind = lHTML
	} else if m, ok := listMarker(o.ind, o.rest); ok && (!inPara || (!isBlank(m.content) && (!m.ordered || m.num == 1))) {
		o.kind, o.mark = lItem, m
	}
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

// fenceOpen returns the fence rest starts with (three or more backticks
// or tildes; a backtick fence's info string has no backtick), or "".
func fenceOpen(rest string) string {
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return ""
	}
	n := 0
	for n < len(rest) && rest[n] == rest[0] {
		n++
	}
	if n < 3 || (rest[0] == '`' && strings.IndexByte(rest[n:], '`') >= 0) {
		return ""
	}
	return rest[:n]
}

func fenceCloses(ln, fence string) bool {
	ind, n := indentOf(ln)
	if ind >= 4 {
		return false
	}
	s := ln[n:]
	k := 0
	for k < len(s) && s[k] == fence[0] {
		k++
	}
	return k >= len(fence) && isBlank(s[k:])
}

func isRule(rest string) bool {
	if rest == "" || (rest[0] != '-' && rest[0] != '*' && rest[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case rest[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// atxLevel is the level of the "#" heading rest starts, or 0.
func atxLevel(rest string) int {
	n := 0
	for n < len(rest) && rest[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(rest) && rest[n] != ' ' && rest[n] != '\t') {
		return 0
	}
	return n
}

func atxHeading(rest string, lvl, i int) *block {
	s := strings.TrimSpace(rest[lvl:])
	// A closing run of '#' goes when a space (or nothing) is before it.
	if t := strings.TrimRight(s, "#"); t != s && (t == "" || t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		s = strings.TrimSpace(t)
	}
	return &block{kind: bHeading, level: lvl, lines: []string{s}, first: i, last: i}
}

// setextLevel is 1 for a "===" underline, 2 for "---", else 0.
func setextLevel(rest string) int {
	s := strings.TrimRight(rest, " \t")
	if s == "" || strings.Trim(s, string(s[0])) != "" {
		return 0
	}
	switch s[0] {
	case '=':
		return 1
	case '-':
		return 2
	}
	return 0
}

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

// htmlStart is the kind (1–7, as CommonMark numbers them) of the HTML
// block rest opens, or 0; kind 7 (any tag alone on its line) cannot
// interrupt a paragraph.
func htmlStart(rest string, inPara bool) int {
	if len(rest) < 2 || rest[0] != '<' {
		return 0
	}
	low := strings.ToLower(rest[:min(len(rest), 12)])
	for _, t := range [...]string{"<script", "<pre", "<style", "<textarea"} {
		if strings.HasPrefix(low, t) && (len(rest) == len(t) || rest[len(t)] == ' ' || rest[len(t)] == '\t' || rest[len(t)] == '>') {
			return 1
		}
	}
	switch {
	case strings.HasPrefix(rest, "<!--"):
		return 2
	case strings.HasPrefix(rest, "<?"):
		return 3
	case strings.HasPrefix(rest, "<![CDATA["):
		return 5
	case len(rest) > 2 && rest[1] == '!' && isLetter(rest[2]):
		return 4
	}
	name := rest[1:]
	name = strings.TrimPrefix(name, "/")
	n := 0
	for n < len(name) && (isLetter(name[n]) || (n > 0 && (isDigit(name[n]) || name[n] == '-'))) {
		n++
	}
	if n == 0 {
		return 0
	}
	after := name[n:]
	if isBlockTag(strings.ToLower(name[:n])) && (after == "" || after[0] == ' ' || after[0] == '\t' || after[0] == '>' || strings.HasPrefix(after, "/>")) {
		return 6
	}
	if !inPara {
		if tn := htmlTag(rest, nil); tn > 0 && isBlank(rest[tn:]) {
			return 7
		}
	}
	return 0
}

// htmlEnds reports whether ln ends an HTML block of kind 1–5.
func htmlEnds(ln string, kind int, first bool) bool {
	switch kind {
	case 1:
		low := strings.ToLower(ln)
		return strings.Contains(low, "</script>") || strings.Contains(low, "</pre>") ||
			strings.Contains(low, "</style>") || strings.Contains(low, "</textarea>")
	case 2:
		if first { // the end may not overlap the start's "<!--"
			if i := strings.Index(ln, "<!--"); i >= 0 {
				return strings.Contains(ln[i+4:], "-->") || strings.HasPrefix(ln[i+2:], "->") || strings.HasPrefix(ln[i+2:], "-->")
			}
		}
		return strings.Contains(ln, "-->")
	case 3:
		if first {
			if i := strings.Index(ln, "<?"); i >= 0 {
				return strings.Contains(ln[i+2:], "?>")
			}
		}
		return strings.Contains(ln, "?>")
	case 4:
		return strings.Contains(ln, ">")
	case 5:
		return strings.Contains(ln, "]]>")
	}
	return false
}

// isBlockTag: the HTML tags that open an HTML block of kind 6.
func isBlockTag(name string) bool {
	switch name {
	case "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center",
		"col", "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption",
		"figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head",
		"header", "hr", "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav",
		"noframes", "ol", "optgroup", "option", "p", "param", "search", "section", "summary", "table",
		"tbody", "td", "tfoot", "th", "thead", "title", "tr", "track", "ul":
		return true
	}
	return false
}

// indentOf returns the columns of ln's leading spaces and tabs (a tab
// to the next multiple of four) and their length in bytes.
func indentOf(ln string) (cols, n int) {
	for n < len(ln) {
		switch ln[n] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, n
		}
		n++
	}
	return cols, n
}

// stripCols removes up to cols columns of leading white space, a tab
// that is only partly removed leaving its other columns as spaces.
func stripCols(ln string, cols int) string {
	c := 0
	for i := 0; i < len(ln); i++ {
		if c >= cols {
			return ln[i:]
		}
		switch ln[i] {
		case ' ':
			c++
		case '\t':
			w := 4 - c%4
			if c+w > cols {
				return strings.Repeat(" ", c+w-cols) + ln[i+1:]
			}
			c += w
		default:
			return ln[i:]
		}
	}
	return ""
}

func isBlank(s string) bool { return strings.TrimLeft(s, " \t") == "" }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
