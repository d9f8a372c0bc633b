// Package markdown renders Markdown as styled terminal lines for the UI.
//
// It parses with goldmark's CommonMark core only and highlights code with
// a small scanner of its own (highlight.go). That is the point of the
// package: glamour, which the UI used before, links chroma's lexer and
// style registries, bluemonday and goldmark's extensions, whose package
// init ran in every rally process (5.5 MB and 70,000 allocations before
// main, in `rally --version` as much as in the UI). Here nothing is built
// before the first New: the parser, the styles and each language's word
// lists are made by the renderer that uses them.
package markdown

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
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
	p     parser.Parser
	langs map[string]*lang
}

// New builds a renderer that wraps at width columns (no wrapping when
// width <= 0).
func New(width int, theme Theme) *Renderer {
	return &Renderer{
		width: width,
		st:    newPalette(theme),
		p: parser.NewParser(
			parser.WithBlockParsers(parser.DefaultBlockParsers()...),
			parser.WithInlineParsers(parser.DefaultInlineParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		),
		langs: map[string]*lang{},
	}
}

// Render returns src rendered, lines joined by "\n", with no trailing
// spaces and no blank lines around it.
func (r *Renderer) Render(src string) string {
	source := []byte(src)
	doc := r.p.Parse(text.NewReader(source))
	lines := r.blocks(doc, source, r.width, true)
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// blocks renders the block children of n at width w, a blank line
// between them unless tight (the items of a tight list).
func (r *Renderer) blocks(n ast.Node, src []byte, w int, loose bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, src, w)
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

func (r *Renderer) block(n ast.Node, src []byte, w int) []string {
	st := &r.st
	switch n := n.(type) {
	case *ast.Paragraph:
		if table := tableRows(n, src); table != nil {
			return r.table(table, w)
		}
		return r.wrapped(r.inline(n, src, st.text), w)
	case *ast.TextBlock:
		return r.wrapped(r.inline(n, src, st.text), w)
	case *ast.Heading:
		head := strings.Repeat("#", n.Level) + " "
		return r.wrapped(st.heading.render(head)+r.inline(n, src, st.heading), w)
	case *ast.ThematicBreak:
		return []string{st.rule.render(strings.Repeat("─", max(3, min(w, 80))))}
	case *ast.FencedCodeBlock:
		return r.code(string(n.Language(src)), n.Lines(), src, w)
	case *ast.CodeBlock:
		return r.code("", n.Lines(), src, w)
	case *ast.Blockquote:
		bar := st.quote.render("│ ")
		ls := r.blocks(n, src, inner(w, 2), true)
		for i := range ls {
			ls[i] = bar + ls[i]
		}
		return ls
	case *ast.List:
		return r.list(n, src, w)
	case *ast.HTMLBlock:
		var ls []string
		for i := 0; i < n.Lines().Len(); i++ {
			ls = append(ls, r.wrapped(strings.TrimRight(string(atValue(n.Lines(), i, src)), "\n"), w)...)
		}
		return ls
	}
	// A node kind CommonMark's core does not make: its text, plainly.
	return r.wrapped(string(n.Text(src)), w)
}

// list renders the items with their markers ("• " or "n. "), the lines
// after an item's first indented under its text.
func (r *Renderer) list(l *ast.List, src []byte, w int) []string {
	var out []string
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		mark := "• "
		if l.IsOrdered() {
			mark = strconv.Itoa(num) + ". "
			num++
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		mw := ansi.StringWidth(mark)
		ls := r.blocks(it, src, inner(w, mw), !l.IsTight)
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
func (r *Renderer) code(language string, segs *text.Segments, src []byte, w int) []string {
	var b strings.Builder
	for i := 0; i < segs.Len(); i++ {
		b.Write(atValue(segs, i, src))
	}
	body := strings.TrimRight(b.String(), "\n")
	var ls []string
	for _, line := range r.highlight(language, body) {
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

// inline renders the inline children of n, each run of text with the
// style of every emphasis, link or code span around it (styles are
// combined per run, as a reset inside a nested span would end the outer
// one).
func (r *Renderer) inline(n ast.Node, src []byte, s style) string {
	var b strings.Builder
	r.inlineTo(&b, n, src, s)
	return b.String()
}

func (r *Renderer) inlineTo(b *strings.Builder, n ast.Node, src []byte, s style) {
	st := &r.st
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(src)
			if !c.IsRaw() {
				// What the HTML renderer resolves as it writes: backslash
				// escapes and character references.
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.WriteString(s.render(string(v)))
			switch {
			case c.HardLineBreak():
				b.WriteString("\n")
			case c.SoftLineBreak():
				b.WriteString(" ")
			}
		case *ast.String:
			b.WriteString(s.render(string(c.Value)))
		case *ast.CodeSpan:
			b.WriteString(st.inlineCode.render(string(c.Text(src))))
		case *ast.Emphasis:
			switch {
			case st.plain:
				r.inlineTo(b, c, src, s)
			case c.Level >= 2:
				r.inlineTo(b, c, src, s.bold())
			default:
				r.inlineTo(b, c, src, s.italic())
			}
		case *ast.Link:
			before := b.Len()
			r.inlineTo(b, c, src, s.with(st.link))
			if dest := string(c.Destination); dest != "" && !strings.Contains(b.String()[before:], dest) {
				b.WriteString(" " + st.url.render("("+dest+")"))
			}
		case *ast.AutoLink:
			b.WriteString(s.with(st.link).render(string(c.URL(src))))
		case *ast.Image:
			b.WriteString(s.render("[image: " + string(c.Text(src)) + "]"))
			if dest := string(c.Destination); dest != "" {
				b.WriteString(" " + st.url.render("("+dest+")"))
			}
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				b.WriteString(s.render(string(atValue(c.Segments, i, src))))
			}
		default:
			r.inlineTo(b, c, src, s)
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
// nil. CommonMark's core has no tables and goldmark's extension package
// compiles its regexps at init, so the UI reads them itself: models
// answer with tables often.
func tableRows(p *ast.Paragraph, src []byte) [][]string {
	lines := p.Lines()
	if lines.Len() < 2 {
		return nil
	}
	var rows [][]string
	for i := 0; i < lines.Len(); i++ {
		line := strings.TrimSpace(string(atValue(lines, i, src)))
		if !strings.HasPrefix(line, "|") {
			return nil
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
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
			row[j] = r.cell(c)
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

// cell renders a table cell's inline Markdown on one line.
func (r *Renderer) cell(c string) string {
	src := []byte(c)
	doc := r.p.Parse(text.NewReader(src))
	var parts []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		parts = append(parts, r.inline(n, src, r.st.text))
	}
	return strings.Join(parts, " ")
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

func atValue(segs *text.Segments, i int, src []byte) []byte {
	seg := segs.At(i)
	return seg.Value(src)
}
