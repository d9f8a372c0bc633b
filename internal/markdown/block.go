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
	b, _ := parseNested(&source{text: lines, ended: true}, refs, 0)
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
		o.kind = lText // past maxDepth a container's marker is text
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
