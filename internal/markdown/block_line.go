package markdown

import "strings"

// Lines: what block a line opens (classify), the test for each kind, and
// the columns of indents.

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
