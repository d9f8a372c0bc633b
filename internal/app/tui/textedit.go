package tui

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rally-agent/rally/internal/termsafe"
)

// textEdit is the prompt's multi-line text buffer: the text as runes with
// a cursor between them, soft-wrapped at the width for display. It is
// ours rather than bubbles' textarea because textarea links a clipboard
// package whose init searches PATH in every rally process, UI or not.
//
// There is no Ctrl+V: reading the system clipboard is what that package
// did. Terminals paste with their own key into bracketed paste, which
// arrives as a tea.PasteMsg and is inserted like typed text.
//
// A cursor key costs what its own scan does: it moves the cursor and the
// scroll over the layout there is. An edit measures and lays out again
// the lines it touches, and moves the rows of the lines after them; only
// setValue and a new width lay out the whole text.
//
// A tab stays a tab, so the prompt is sent as it was pasted: a Makefile's
// recipe lines must begin with one, and Go is indented with them. It is
// one rune, so one cursor step, and shows as the spaces to the next tab
// stop, the transcript's rule (tabSpan), counted from the row's start,
// since each row is drawn behind the prompt as a line of its own; a row's
// end stops it first, as a terminal's right margin does. Only a paste
// brings one: the Tab key completes commands.
type textEdit struct {
	buf     []rune // the value; '\n' ends a line
	cur     int    // cursor, 0..len(buf)
	width   int    // text columns (the prompt's excluded), at least minEditWidth
	top     int    // first row shown
	goal    int    // the column Up and Down aim for, while aiming
	aiming  bool   // the last move was Up or Down: a short row on the way keeps the goal
	cells   []int8 // per rune: its grapheme cluster's width, notFirst or tabCell; kept by each edit
	rows    []span // buf soft-wrapped at width; nil when stale
	layouts int    // how many times all rows were laid out: a test holds keys to none
	edits   int    // how many edits there were: the editor looks its hint up only after one
}

// minEditWidth is the fewest text columns: a wide rune needs two.
const minEditWidth = 2

// notFirst marks a rune inside a grapheme cluster after its first: it
// takes no cell of its own, and the cursor steps over it.
const notFirst = -1

// span is one display row: buf[start:end], without its '\n'.
type span struct{ start, end int }

// tabCell marks a tab: its width is where it stands in its row.
const tabCell = -2

func (t *textEdit) value() string { return string(t.buf) }

// setValue replaces the text and puts the cursor at its end.
func (t *textEdit) setValue(s string) {
	t.buf = clean(s)
	t.cells = t.measure(t.cells[:0], 0, len(t.buf))
	t.rows = nil
	t.cur, t.aiming = len(t.buf), false
	t.scroll()
}

// setWidth is the one place the width is clamped. The cells do not
// depend on it, so a new width only lays out again.
func (t *textEdit) setWidth(w int) {
	if w = max(w, minEditWidth); w != t.width {
		t.width, t.rows = w, nil
	}
	t.scroll()
}

// scroll moves the view as little as shows the cursor's row, and back
// when the text shrank below it.
func (t *textEdit) scroll() {
	r, h := t.cursorRow(), t.height()
	t.top = min(t.top, r)
	t.top = max(t.top, r-h+1)
	t.top = max(min(t.top, len(t.layout())-h), 0)
}

// height is how many rows show: one per row (there is always one), up to
// maxEditorRows.
func (t *textEdit) height() int { return min(len(t.layout()), maxEditorRows) }

// clean is text made insertable: CRLF and CR become LF; other control
// characters but tab (bidi controls among them: termsafe's rule) and
// invalid UTF-8 are dropped, so nothing in the buffer can move the
// terminal's cursor or reorder what it shows. A tab is drawn as spaces.
func clean(s string) []rune {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	rs := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if !termsafe.Unsafe(r) && (r != utf8.RuneError || n > 1) {
			rs = append(rs, r)
		}
	}
	return rs
}

// measure appends the cells of buf[from:to] to dst. Widths are the
// terminal's, by grapheme cluster (a flag or a family emoji is one double
// cell, not two or three), the way lipgloss measures the rest of the
// frame. A '\n' is a cluster of its own, so each line measures apart.
func (t *textEdit) measure(dst []int8, from, to int) []int8 {
	s := string(t.buf[from:to])
	for len(s) > 0 {
		cl, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
		if cl == "" { // not for valid UTF-8, but this loop would never end
			_, n := utf8.DecodeRuneInString(s)
			cl, w = s[:n], 0
		}
		c := int8(min(w, 2))
		if cl == "\t" {
			c = tabCell
		}
		dst = append(dst, c)
		for range utf8.RuneCountInString(cl) - 1 {
			dst = append(dst, notFirst)
		}
		s = s[len(cl):]
	}
	return dst
}

// cellsAt is how many cells rune i takes at column col of its row: a tab
// reaches the next tab stop or the row's end, and takes at least one cell,
// so that at a full row's end it goes to the next row like a rune.
func (t *textEdit) cellsAt(i, col int) int {
	switch c := t.cells[i]; c {
	case notFirst:
		return 0
	case tabCell:
		return max(min(tabSpan(col), t.width-col), 1)
	default:
		return int(c)
	}
}

// advance is the column after buf[from:to] drawn from column col.
func (t *textEdit) advance(from, to, col int) int {
	for i := from; i < to; i++ {
		col += t.cellsAt(i, col)
	}
	return col
}

// blank is a rune a row may break after.
func blank(r rune) bool { return r == ' ' || r == '\t' }

// clusterStart reports whether a cursor at p is not inside a cluster.
func (t *textEdit) clusterStart(p int) bool {
	return p <= 0 || p >= len(t.buf) || t.cells[p] != notFirst
}

// layout is the rows, all laid out again if they are stale.
func (t *textEdit) layout() []span {
	if t.rows == nil {
		t.rows = t.wrapLines(make([]span, 0, 4), 0, len(t.buf))
		t.layouts++
	}
	return t.rows
}

// wrapLines appends the rows of the lines from the one that starts at
// from to the one that ends at to (at its '\n' or the text's end).
func (t *textEdit) wrapLines(rows []span, from, to int) []span {
	for p := from; p <= to; {
		rows, p = t.wrapLine(rows, p)
	}
	return rows
}

// wrapLine appends the rows of the line that starts at start, soft-wrapped
// at the width: after the last blank that fits, or inside a word longer
// than the row. A line that fills its last row exactly gets an empty row
// after it, for the cursor. It returns where the next line starts.
func (t *textEdit) wrapLine(rows []span, start int) ([]span, int) {
	col, space := 0, -1 // space: index after the row's last blank
	for i := start; ; i++ {
		if i == len(t.buf) || t.buf[i] == '\n' {
			rows = append(rows, span{start, i})
			if col >= t.width {
				rows = append(rows, span{i, i})
			}
			return rows, i + 1
		}
		r := t.buf[i]
		rw := t.cellsAt(i, col)
		// A word carried to the next row may still not fit with r: then
		// the second pass breaks right before r.
		for col+rw > t.width && i > start {
			brk := i
			if space > start && !blank(r) {
				brk = space
			}
			rows = append(rows, span{start, brk})
			start, space = brk, -1
			col = t.advance(brk, i, 0)
			rw = t.cellsAt(i, col) // a tab's width is where it lands
		}
		if blank(r) {
			space = i + 1
		}
		col += rw
	}
}

// rowAt is the first row that starts at or after p, or len(rows).
func (t *textEdit) rowAt(p int) int {
	rows := t.layout()
	return sort.Search(len(rows), func(i int) bool { return rows[i].start >= p })
}

// cursorRow is the row that shows the cursor: the last that starts at or
// before it, so a cursor on a soft break shows at the next row's start.
func (t *textEdit) cursorRow() int { return t.rowAt(t.cur+1) - 1 }

// col is the display column of position p in row r.
func (t *textEdit) col(r, p int) int { return t.advance(t.layout()[r].start, p, 0) }

func (t *textEdit) onFirstRow() bool { return t.cursorRow() == 0 }

func (t *textEdit) onLastRow() bool { return t.cursorRow() == len(t.layout())-1 }

// moveRow puts the cursor dir rows up or down at the column it was at
// before Up and Down began, or as near as the row allows.
func (t *textEdit) moveRow(dir int) {
	rows := t.layout()
	r := t.cursorRow()
	n := r + dir
	if n < 0 || n >= len(rows) {
		return
	}
	if !t.aiming {
		t.goal, t.aiming = t.col(r, t.cur), true
	}
	s := rows[n]
	last := s.end
	if n+1 < len(rows) && rows[n+1].start == s.end {
		last = s.end - 1 // a soft break's position shows on the next row
	}
	p, c := s.start, 0
	for p < last {
		w := t.cellsAt(p, c)
		if c+w > t.goal {
			break
		}
		c += w
		p++
	}
	for p > s.start && !t.clusterStart(p) { // a row may end inside a cluster's runes
		p--
	}
	t.cur = p
	t.scroll()
}

func (t *textEdit) insert(s string) {
	if rs := clean(s); len(rs) > 0 {
		t.replace(t.cur, t.cur, rs)
	}
}

// cut removes buf[from:to] and leaves the cursor at from.
func (t *textEdit) cut(from, to int) {
	if from, to = max(from, 0), min(to, len(t.buf)); from < to {
		t.replace(from, to, nil)
	}
}

// replace puts rs in the place of buf[from:to] and the cursor after it.
// The lines it touches are measured and laid out again (a cluster or a
// row never spans a '\n'); the rows of the lines after them only move.
func (t *textEdit) replace(from, to int, rs []rune) {
	start, end := t.lineStart(from), t.lineEnd(to)
	moved := len(rs) - (to - from)
	t.buf = slices.Replace(t.buf, from, to, rs...)
	t.cells = slices.Replace(t.cells, start, end, t.measure(nil, start, end+moved)...)
	if t.rows != nil {
		first, after := t.rowAt(start), t.rowAt(end+1)
		for i := after; i < len(t.rows); i++ {
			t.rows[i].start += moved
			t.rows[i].end += moved
		}
		t.rows = slices.Replace(t.rows, first, after, t.wrapLines(nil, start, end+moved)...)
	}
	t.cur, t.aiming = from+len(rs), false
	t.edits++
	t.scroll()
}

func (t *textEdit) moveTo(p int) {
	t.cur, t.aiming = min(max(p, 0), len(t.buf)), false
	t.scroll()
}

// step is the cursor one grapheme cluster back (-1) or on (+1), so an
// accent or a joined emoji goes as one.
func (t *textEdit) step(dir int) int {
	p := min(max(t.cur+dir, 0), len(t.buf))
	for !t.clusterStart(p) {
		p += dir
	}
	return p
}

// lineStart and lineEnd bound the line (between '\n's) that holds p.
func (t *textEdit) lineStart(p int) int {
	for p > 0 && t.buf[p-1] != '\n' {
		p--
	}
	return p
}

func (t *textEdit) lineEnd(p int) int {
	for p < len(t.buf) && t.buf[p] != '\n' {
		p++
	}
	return p
}

// wordLeft is where the word before the cursor starts: back over spaces
// (line ends count), then over the word.
func (t *textEdit) wordLeft() int {
	p := t.cur
	for p > 0 && unicode.IsSpace(t.buf[p-1]) {
		p--
	}
	for p > 0 && !unicode.IsSpace(t.buf[p-1]) {
		p--
	}
	return p
}

func (t *textEdit) wordRight() int {
	p := t.cur
	for p < len(t.buf) && unicode.IsSpace(t.buf[p]) {
		p++
	}
	for p < len(t.buf) && !unicode.IsSpace(t.buf[p]) {
		p++
	}
	return p
}

// key applies one key press. Keys it does not know change nothing.
func (t *textEdit) key(k tea.KeyPressMsg) {
	switch k.String() {
	case "shift+enter", "alt+enter", "ctrl+j":
		t.insert("\n")
	case "backspace", "ctrl+h":
		t.cut(t.step(-1), t.cur)
	case "delete", "ctrl+d":
		t.cut(t.cur, t.step(1))
	case "left", "ctrl+b":
		t.moveTo(t.step(-1))
	case "right", "ctrl+f":
		t.moveTo(t.step(1))
	case "alt+left", "ctrl+left", "alt+b":
		t.moveTo(t.wordLeft())
	case "alt+right", "ctrl+right", "alt+f":
		t.moveTo(t.wordRight())
	case "up", "ctrl+p":
		t.moveRow(-1)
	case "down", "ctrl+n":
		t.moveRow(1)
	case "home", "ctrl+a":
		t.moveTo(t.lineStart(t.cur))
	case "end", "ctrl+e":
		t.moveTo(t.lineEnd(t.cur))
	case "ctrl+home", "alt+<":
		t.moveTo(0)
	case "ctrl+end", "alt+>":
		t.moveTo(len(t.buf))
	case "ctrl+w", "alt+backspace", "ctrl+backspace":
		t.cut(t.wordLeft(), t.cur)
	case "alt+d", "alt+delete", "ctrl+delete":
		t.cut(t.cur, t.wordRight())
	case "ctrl+k":
		t.cut(t.cur, t.lineEnd(t.cur))
	case "ctrl+u":
		t.cut(t.lineStart(t.cur), t.cur)
	default:
		if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			t.insert(k.Text)
		}
	}
}

// editStyles are the editor's looks: the prompt, the placeholder and the
// cursor, a reversed cell.
type editStyles struct {
	prompt, placeholder, cursor lipgloss.Style
}

func newEditStyles(noColor bool) editStyles {
	cursor := lipgloss.NewStyle().Reverse(true)
	if noColor {
		return editStyles{cursor: cursor}
	}
	return editStyles{
		prompt:      lipgloss.NewStyle().Foreground(lipgloss.Color("7")),
		placeholder: lipgloss.NewStyle().Foreground(lipgloss.Color("240")),
		cursor:      cursor.Foreground(lipgloss.Color("7")),
	}
}

// view draws the shown rows, each behind prompt and padded to the width,
// the cursor as a reversed cell; an empty buffer shows placeholder.
func (t *textEdit) view(st editStyles, prompt, placeholder string) string {
	w := t.width
	p := st.prompt.Render(prompt)
	if len(t.buf) == 0 && placeholder != "" {
		first, _, _ := strings.Cut(ansi.Wordwrap(placeholder, w, ""), "\n")
		first = ansi.Truncate(strings.TrimSpace(first), w, "")
		r, size := utf8.DecodeRuneInString(first)
		rest := first[size:]
		return p + st.cursor.Render(string(r)) + st.placeholder.Render(rest) +
			strings.Repeat(" ", max(0, w-ansi.StringWidth(first)))
	}
	rows := t.layout()
	cr := t.cursorRow()
	var b strings.Builder
	for i := t.top; i < t.top+t.height() && i < len(rows); i++ {
		if i > t.top {
			b.WriteByte('\n')
		}
		b.WriteString(p)
		s := rows[i]
		var used int
		if i != cr {
			used = t.draw(&b, s.start, s.end, 0)
		} else {
			used = t.drawCursorRow(&b, st, s)
		}
		b.WriteString(strings.Repeat(" ", max(0, w-used)))
	}
	return b.String()
}

// drawCursorRow writes row s with the cursor's cluster reversed, or a
// reversed space past the row's end, and returns the cells it took.
func (t *textEdit) drawCursorRow(b *strings.Builder, st editStyles, s span) int {
	col := t.draw(b, s.start, t.cur, 0)
	if t.cur == s.end {
		b.WriteString(st.cursor.Render(" "))
		return col + 1
	}
	q := t.cur + 1 // the whole cluster shows under the cursor, and a whole tab
	for q < s.end && !t.clusterStart(q) {
		q++
	}
	var under strings.Builder
	col = t.draw(&under, t.cur, q, col)
	b.WriteString(st.cursor.Render(under.String()))
	return t.draw(b, q, s.end, col)
}

// draw writes buf[from:to] from column col of its row, a tab as the
// spaces it spans, and returns the column after it.
func (t *textEdit) draw(b *strings.Builder, from, to, col int) int {
	for i := from; i < to; i++ {
		w := t.cellsAt(i, col)
		if t.buf[i] == '\t' {
			b.WriteString(strings.Repeat(" ", w))
		} else {
			b.WriteRune(t.buf[i])
		}
		col += w
	}
	return col
}
