// Package markdown renders Markdown as styled terminal lines for the UI.
//
// It parses with a CommonMark parser of its own (block*.go, inline*.go)
// and highlights code with a small scanner of its own (highlight.go).
// That is the point of the package: every rally process links it, and
// whatever a linked package builds at init every process pays, in
// `rally --version` as much as in the UI. glamour, which the UI used
// first, cost 5.5 MB and 70,000 allocations before main; goldmark's core,
// which came next, still 250 KB and 1,400 (its entity table, a compiled
// regexp, its parser tables). Here nothing is built before the first
// Render: the parser is code, the styles and each language's word lists
// are made by the renderer that uses them, and named character
// references are looked up in the html package's table, built on first
// use.
package markdown

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Theme picks the colours: Dark or Light terminal, or Plain (no colour,
// no attributes: the structure alone, for NO_COLOR).
type Theme int

const (
	Dark Theme = iota
	Light
	Plain
)

// Renderer renders Markdown at one width and theme. It is not safe for
// concurrent use (the UI renders from one goroutine).
type Renderer struct {
	width int
	st    palette
	langs map[string]*lang
	refs  map[string]string // the link reference definitions of the document being rendered
}

// New builds a renderer that wraps at width columns (no wrapping when
// width <= 0).
func New(width int, theme Theme) *Renderer {
	return &Renderer{
		width: width,
		st:    newPalette(theme),
		langs: map[string]*lang{},
	}
}

// Render returns src rendered, lines joined by "\n", with no trailing
// spaces and no blank lines around it.
func (r *Renderer) Render(src string) string {
	r.refs = map[string]string{}
	// Invalid bytes become U+FFFD first: removing a delimiter between two
	// stray bytes (\xd5_\x8e) must not join them into a new character.
	src = strings.ToValidUTF8(src, "\uFFFD")
	doc := parseBlocks(splitLines(src), r.refs)
	lines := r.blocks(doc, r.width, true)
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// splitLines cuts src into lines, "\r\n" and "\r" ending one as "\n"
// does, and NUL replaced as CommonMark asks.
func splitLines(src string) []string {
	if strings.ContainsAny(src, "\r\x00") {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
		src = strings.ReplaceAll(src, "\x00", "\uFFFD")
	}
	src = strings.TrimSuffix(src, "\n")
	if src == "" {
		return nil
	}
	return strings.Split(src, "\n")
}

// blocks renders bs at width w, a blank line between them unless tight
// (the items of a tight list).
func (r *Renderer) blocks(bs []*block, w int, loose bool) []string {
	var out []string
	for _, b := range bs {
		ls := r.block(b, w)
		if ls == nil {
			continue
		}
		if len(out) > 0 && loose {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

func (r *Renderer) block(b *block, w int) []string {
	st := &r.st
	switch b.kind {
	case bPara:
		if table := tableRows(b.lines); table != nil {
			return r.table(table, w)
		}
		return r.wrapped(r.inline(strings.Join(b.lines, "\n"), st.text), w)
	case bHeading:
		head := strings.Repeat("#", b.level) + " "
		return r.wrapped(st.heading.render(head)+r.inline(strings.Join(b.lines, "\n"), st.heading), w)
	case bRule:
		return []string{st.rule.render(strings.Repeat("─", max(3, min(w, 80))))}
	case bCode:
		return r.code(b.info, b.lines, w)
	case bQuote:
		bar := st.quote.render("│ ")
		ls := r.blocks(b.kids, inner(w, 2), true)
		for i := range ls {
			ls[i] = bar + ls[i]
		}
		return ls
	case bList:
		return r.list(b, w)
	case bHTML:
		var ls []string
		for _, line := range b.lines {
			ls = append(ls, r.wrapped(line, w)...)
		}
		return ls
	}
	return nil
}

// list renders the items with their markers ("• " or "n. "), the lines
// after an item's first indented under its text.
func (r *Renderer) list(l *block, w int) []string {
	var out []string
	num := l.start
	for _, it := range l.kids {
		mark := "• "
		if l.ordered {
			mark = strconv.Itoa(num) + ". "
			num++
		}
		if len(out) > 0 && !l.tight {
			out = append(out, "")
		}
		mw := ansi.StringWidth(mark)
		ls := r.blocks(it.kids, inner(w, mw), !l.tight)
		if len(ls) == 0 {
			ls = []string{""}
		}
		pad := strings.Repeat(" ", mw)
		for i, line := range ls {
			if i == 0 {
				out = append(out, r.st.bullet.render(mark)+line)
			} else {
				out = append(out, pad+line)
			}
		}
	}
	return out
}

// code renders a code block indented by two columns, highlighted when
// its language is known; long lines break at the width rather than
// running off the screen.
func (r *Renderer) code(info string, lines []string, w int) []string {
	body := strings.TrimRight(strings.Join(lines, "\n"), "\n")
	var ls []string
	for _, line := range r.highlight(info, body) {
		line = strings.ReplaceAll(line, "\t", "    ")
		if w > 2 && ansi.StringWidth(line) > w-2 {
			ls = append(ls, strings.Split(ansi.Hardwrap(line, w-2, true), "\n")...)
			continue
		}
		ls = append(ls, line)
	}
	for i := range ls {
		ls[i] = "  " + ls[i]
	}
	return ls
}

// inline renders src's inlines, each run of text with the style of every
// emphasis, link or code span around it (styles are combined per run,
// as a reset inside a nested span would end the outer one).
func (r *Renderer) inline(src string, s style) string {
	var w runWriter
	r.inlineTo(&w, parseInline(src, r.refs), s, 0)
	w.flush()
	return w.out.String()
}

// runWriter joins the adjacent pieces of one style into one run, one
// escape sequence before it and one reset after (a delimiter that stays
// text, or an escape, would otherwise cut a word into several).
type runWriter struct {
	out  strings.Builder
	st   style
	pend strings.Builder
}

func (w *runWriter) text(s style, t string) {
	if s != w.st {
		w.flush()
		w.st = s
	}
	w.pend.WriteString(t)
}

// raw writes t as it is, outside any run.
func (w *runWriter) raw(t string) {
	w.flush()
	w.out.WriteString(t)
}

func (w *runWriter) flush() {
	if w.pend.Len() > 0 {
		w.out.WriteString(w.st.render(w.pend.String()))
		w.pend.Reset()
	}
}

// maxStyleDepth: past this many nested spans the styles stop adding up
// (each level would lengthen every run's escape sequence).
const maxStyleDepth = 8

func (r *Renderer) inlineTo(w *runWriter, n *node, s style, depth int) {
	st := &r.st
	depth++
	for ; n != nil; n = n.next {
		switch n.kind {
		case nText, nHTML:
			w.text(s, n.text)
		case nSoftBreak:
			w.text(s, " ")
		case nHardBreak:
			w.raw("\n")
		case nCode:
			w.text(st.inlineCode, n.text)
		case nEmph, nStrong:
			switch {
			case st.plain || depth > maxStyleDepth:
				r.inlineTo(w, n.first, s, depth)
			case n.kind == nStrong:
				r.inlineTo(w, n.first, s.bold(), depth)
			default:
				r.inlineTo(w, n.first, s.italic(), depth)
			}
		case nLink:
			ls := s
			if depth <= maxStyleDepth {
				ls = s.with(st.link)
			}
			w.flush()
			before := w.out.Len()
			r.inlineTo(w, n.first, ls, depth)
			w.flush()
			if n.dest != "" && !strings.Contains(w.out.String()[before:], n.dest) {
				w.raw(" " + st.url.render("("+n.dest+")"))
			}
		case nAutolink:
			w.text(s.with(st.link), n.text)
		case nImage:
			w.text(s, "[image: "+plainText(n.first)+"]")
			if n.dest != "" {
				w.raw(" " + st.url.render("("+n.dest+")"))
			}
		}
	}
}

// wrapped breaks s at width w (words first, long words hard), keeping
// its styles across the breaks.
func (r *Renderer) wrapped(s string, w int) []string {
	if w > 0 {
		s = lipgloss.Wrap(s, w, " ")
	}
	return strings.Split(s, "\n")
}

// tableRows returns the cells of a paragraph that is a GFM table (every
// line starts with "|", the second is the |---|---| delimiter row), or
// nil. Models answer with tables often.
func tableRows(lines []string) [][]string {
	if len(lines) < 2 {
		return nil
	}
	var rows [][]string
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			return nil
		}
		cells := splitCells(line)
		if i == 1 {
			if !delimiterRow(cells) {
				return nil
			}
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

// splitCells cuts a table row at its pipes, but not at an escaped one
// ("\\|" is a pipe in the cell, as GFM has it).
func splitCells(line string) []string {
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, "\\|") {
		line = line[:len(line)-1]
	}
	var cells []string
	var c strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			c.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(c.String()))
			c.Reset()
		default:
			c.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(c.String()))
}

func delimiterRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// table lays the rows out in columns as wide as their widest cell, the
// header bold and ruled off, each cell's inline Markdown rendered.
func (r *Renderer) table(rows [][]string, w int) []string {
	for _, row := range rows {
		for j, c := range row {
			row[j] = r.inline(c, r.st.text)
		}
	}
	var widths []int
	for _, row := range rows {
		for j, c := range row {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	var out []string
	for i, row := range rows {
		var b strings.Builder
		for j := range widths {
			c := ""
			if j < len(row) {
				c = row[j]
			}
			if j > 0 {
				b.WriteString(r.st.rule.render(" │ "))
			}
			cell := c + strings.Repeat(" ", widths[j]-ansi.StringWidth(c))
			if i == 0 && !r.st.plain {
				cell = r.st.text.bold().render(cell)
			}
			b.WriteString(cell)
		}
		out = append(out, r.wrapped(b.String(), w)...)
		if i == 0 {
			var rule []string
			for _, cw := range widths {
				rule = append(rule, strings.Repeat("─", cw))
			}
			out = append(out, r.st.rule.render(clip(strings.Join(rule, "─┼─"), w)))
		}
	}
	return out
}

// inner is the width left inside a margin of m columns: at least one
// when there is a width at all (0 means no wrapping).
func inner(w, m int) int {
	if w <= 0 {
		return w
	}
	return max(1, w-m)
}

func clip(s string, w int) string {
	if w > 0 && ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "")
	}
	return s
}

// palette is the styles of one theme.
type palette struct {
	plain                              bool
	text, heading, rule, quote, bullet style
	inlineCode, link, url              style
	code                               [numKinds]style
}

func newPalette(t Theme) palette {
	var p palette
	if t == Plain {
		p.plain = true
		return p
	}
	c := func(dark, light string) style {
		if t == Light {
			return fg(light)
		}
		return fg(dark)
	}
	p.heading = c("39", "27").bold()
	p.rule = c("240", "250")
	p.quote = c("244", "244")
	p.bullet = c("245", "242")
	p.inlineCode = c("203", "160")
	p.link = c("37", "30").with(style{"4"}) // underlined
	p.url = c("244", "244")
	p.code = [numKinds]style{
		plain:   c("252", "235"),
		keyword: c("204", "161").bold(),
		builtin: c("81", "31"),
		str:     c("186", "64"),
		number:  c("141", "91"),
		comment: c("244", "246").italic(),
	}
	return p
}
