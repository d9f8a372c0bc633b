package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// edKeys are the key presses the editor tests name, by their String().
var edKeys = func() map[string]tea.KeyPressMsg {
	m := map[string]tea.KeyPressMsg{}
	named := map[string]rune{
		"enter": tea.KeyEnter, "backspace": tea.KeyBackspace, "delete": tea.KeyDelete,
		"left": tea.KeyLeft, "right": tea.KeyRight, "up": tea.KeyUp, "down": tea.KeyDown,
		"home": tea.KeyHome, "end": tea.KeyEnd,
	}
	for name, code := range named {
		m[name] = tea.KeyPressMsg{Code: code}
		m["alt+"+name] = tea.KeyPressMsg{Code: code, Mod: tea.ModAlt}
		m["ctrl+"+name] = tea.KeyPressMsg{Code: code, Mod: tea.ModCtrl}
		m["shift+"+name] = tea.KeyPressMsg{Code: code, Mod: tea.ModShift}
	}
	for _, c := range "abdefhjknpuvw" {
		m["ctrl+"+string(c)] = tea.KeyPressMsg{Code: c, Mod: tea.ModCtrl}
	}
	for _, c := range "bfd<>" {
		m["alt+"+string(c)] = tea.KeyPressMsg{Code: c, Mod: tea.ModAlt}
	}
	return m
}()

func edKey(t testing.TB, s string) tea.KeyPressMsg {
	t.Helper()
	k, ok := edKeys[s]
	if !ok {
		r, _ := utf8.DecodeRuneInString(s)
		return tea.KeyPressMsg{Code: r, Text: s}
	}
	if k.String() != s {
		t.Fatalf("key %q reads as %q", s, k.String())
	}
	return k
}

// edState writes the buffer with "|" at the cursor.
func edState(te *textEdit) string {
	return string(te.buf[:te.cur]) + "|" + string(te.buf[te.cur:])
}

// fromState is the inverse of edState.
func fromState(width int, s string) *textEdit {
	te := &textEdit{}
	te.setWidth(width)
	before, after, _ := strings.Cut(s, "|")
	te.setValue(before + after)
	te.cur = utf8.RuneCountInString(before)
	te.scroll()
	return te
}

func TestTextEditKeys(t *testing.T) {
	for _, c := range []struct {
		name, from string
		keys       []string
		paste      string
		want       string
	}{
		{"type", "|", []string{"a", "b"}, "", "ab|"},
		{"type mid-line", "a|c", []string{"b"}, "", "ab|c"},
		{"type wide", "|x", []string{"日", "🎉"}, "", "日🎉|x"},
		{"space", "a|", []string{" "}, "", "a |"},
		{"shift+enter", "a|b", []string{"shift+enter"}, "", "a\n|b"},
		{"alt+enter", "a|", []string{"alt+enter"}, "", "a\n|"},
		{"ctrl+j", "|", []string{"ctrl+j"}, "", "\n|"},
		{"enter is the model's", "a|", []string{"enter"}, "", "a|"},
		{"backspace", "ab|c", []string{"backspace"}, "", "a|c"},
		{"backspace wide", "日本|", []string{"backspace"}, "", "日|"},
		{"backspace joins lines", "a\n|b", []string{"backspace"}, "", "a|b"},
		{"backspace at start", "|ab", []string{"backspace"}, "", "|ab"},
		{"backspace empty", "|", []string{"backspace", "delete"}, "", "|"},
		{"delete", "a|bc", []string{"delete"}, "", "a|c"},
		{"delete at end", "ab|", []string{"delete"}, "", "ab|"},
		{"ctrl+d deletes forward", "|ab", []string{"ctrl+d"}, "", "|b"},
		{"left", "ab|", []string{"left"}, "", "a|b"},
		{"left at start", "|ab", []string{"left"}, "", "|ab"},
		{"left over a line end", "a\n|b", []string{"left"}, "", "a|\nb"},
		{"right", "|ab", []string{"right", "ctrl+f"}, "", "ab|"},
		{"right past the end", "ab|", []string{"right", "right"}, "", "ab|"},
		{"home", "ab\ncd|", []string{"home"}, "", "ab\n|cd"},
		{"ctrl+a", "ab\nc|d\nef", []string{"ctrl+a"}, "", "ab\n|cd\nef"},
		{"end", "a|b\ncd", []string{"end"}, "", "ab|\ncd"},
		{"ctrl+e", "|ab", []string{"ctrl+e"}, "", "ab|"},
		{"ctrl+home", "ab\ncd|", []string{"ctrl+home"}, "", "|ab\ncd"},
		{"alt+>", "|ab\ncd", []string{"alt+>"}, "", "ab\ncd|"},
		{"alt+left", "foo bar|", []string{"alt+left"}, "", "foo |bar"},
		{"alt+left twice", "foo bar|", []string{"alt+left", "alt+left"}, "", "|foo bar"},
		{"alt+b from mid-word", "foo ba|r", []string{"alt+b"}, "", "foo |bar"},
		{"alt+b over spaces and a line end", "foo  \n  |bar", []string{"alt+b"}, "", "|foo  \n  bar"},
		{"alt+left at start", "|foo", []string{"alt+left"}, "", "|foo"},
		{"alt+left on spaces only", "   |", []string{"alt+left"}, "", "|   "},
		{"alt+right", "|  foo bar", []string{"alt+right"}, "", "  foo| bar"},
		{"alt+f", "foo| bar", []string{"alt+f"}, "", "foo bar|"},
		{"alt+right at end", "foo|", []string{"alt+right"}, "", "foo|"},
		{"ctrl+w", "foo bar|", []string{"ctrl+w"}, "", "foo |"},
		{"ctrl+w over trailing spaces", "foo bar  |", []string{"ctrl+w"}, "", "foo |"},
		{"ctrl+w mid-word", "foo ba|r", []string{"ctrl+w"}, "", "foo |r"},
		{"ctrl+w at start", "|foo", []string{"ctrl+w"}, "", "|foo"},
		{"alt+backspace", "a 日本|", []string{"alt+backspace"}, "", "a |"},
		{"alt+d", "|foo bar", []string{"alt+d"}, "", "| bar"},
		{"ctrl+k", "a|bc\nd", []string{"ctrl+k"}, "", "a|\nd"},
		{"ctrl+k at line end keeps the line end", "ab|\nd", []string{"ctrl+k"}, "", "ab|\nd"},
		{"ctrl+u", "ab\nc|d", []string{"ctrl+u"}, "", "ab\n|d"},
		{"ctrl+u at line start", "ab\n|d", []string{"ctrl+u"}, "", "ab\n|d"},
		{"ctrl+v is no paste", "ab|", []string{"ctrl+v"}, "", "ab|"},
		{"up to the same column", "abc\nde|f", []string{"up"}, "", "ab|c\ndef"},
		{"up to a shorter line", "ab\ncdef|", []string{"up"}, "", "ab|\ncdef"},
		{"up on the first row", "a|b", []string{"up"}, "", "a|b"},
		{"up through a short line keeps the column", "abcdef\nab\nabcd|ef", []string{"up", "up"}, "", "abcd|ef\nab\nabcdef"},
		{"down through an empty line keeps the column", "abc|\n\nabcdef", []string{"down", "down"}, "", "abc\n\nabc|def"},
		{"up and back down comes back", "abcdef\nab\nabcd|ef", []string{"up", "down"}, "", "abcdef\nab\nabcd|ef"},
		{"a move between sets a new column", "abcdef\nab\nabcd|ef", []string{"up", "left", "up"}, "", "a|bcdef\nab\nabcdef"},
		{"an edit between sets a new column", "abcdef\nab\nabcd|ef", []string{"up", "x", "up"}, "", "abc|def\nabx\nabcdef"},
		{"down by display width", "日本|\nabcd", []string{"down"}, "", "日本\nabcd|"},
		{"down into a wide rune", "abc|\n日本", []string{"down"}, "", "abc\n日|本"},
		{"down on the last row", "a|b", []string{"down", "ctrl+n"}, "", "a|b"},
		{"up a soft-wrapped row", "abcdefghijkl|", []string{"up"}, "", "ab|cdefghijkl"},
		{"down a soft-wrapped row", "a|bcdefghijkl", []string{"down"}, "", "abcdefghijk|l"},
		{"up to a row ending in a soft break", "hello worldwide|", []string{"up"}, "", "hello| worldwide"},
		{"down to the end of a wrapped word", "|hello world", []string{"ctrl+e", "up", "down"}, "", "hello world|"},
		{"left over a flag", "🇺🇸|", []string{"left"}, "", "|🇺🇸"},
		{"right over an accent", "|e\u0301x", []string{"right"}, "", "e\u0301|x"},
		{"backspace a joined emoji", "a👨‍👩‍👧|", []string{"backspace"}, "", "a|"},
		{"delete a letter with its accent", "|e\u0301x", []string{"delete"}, "", "|x"},
		{"down by cluster width", "🇺🇸|\nabcd", []string{"down"}, "", "🇺🇸\nab|cd"},
		{"paste at the cursor", "a|d", nil, "bc", "abc|d"},
		{"paste CRLF and CR", "|", nil, "a\r\nb\rc", "a\nb\nc|"},
		{"paste tab", "|", nil, "a\tb", "a\tb|"},
		{"right over a tab is one step", "a|\tb", []string{"right"}, "", "a\t|b"},
		{"backspace a tab", "a\t|b", []string{"backspace"}, "", "a|b"},
		{"up into a tab lands on it", "a\tb\nabcde|fgh", []string{"up"}, "", "a|\tb\nabcdefgh"},
		{"up to a tab's end", "a\tb\nabcdefgh|i", []string{"up"}, "", "a\t|b\nabcdefghi"},
		{"up past a tab", "a\tb\nabcdefghi|", []string{"up"}, "", "a\tb|\nabcdefghi"},
		{"down from a tab's end", "a\t|b\nabcdefghi", []string{"down"}, "", "a\tb\nabcdefgh|i"},
		{"down from a tab", "a|\tb\nabcdefghi", []string{"down"}, "", "a\tb\na|bcdefghi"},
		{"paste drops bidi controls", "|", nil, "a\u202eb\u2066c\u200fd", "abcd|"},
		// Width 10: "abcdefg🇺🇸" is the first row (日 does not fit after it),
		// the flag's two runes one cluster at its soft break; the goal
		// column 9 would land between them.
		{"up stops before a cluster, not inside it", "abcdefg🇺🇸日xxxxxxx|", []string{"up"}, "", "abcdefg|🇺🇸日xxxxxxx"},
		{"paste drops controls", "|", nil, "a\x1b[31mb\x00", "a[31mb|"},
		{"paste drops invalid UTF-8", "|", nil, "a\xffb", "ab|"},
		{"paste wide", "|", nil, "日本語🎉", "日本語🎉|"},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := fromState(10, c.from)
			for _, k := range c.keys {
				te.key(edKey(t, k))
			}
			if c.paste != "" {
				te.insert(c.paste)
			}
			if got := edState(te); got != c.want {
				t.Fatalf("%q then %q %q: %q, want %q", c.from, c.keys, c.paste, got, c.want)
			}
		})
	}
}

// A key and the frame after it do not lay out the whole text: a cursor
// key lays out nothing, an edit only the lines it touches (FuzzTextEdit
// holds those rows to a full layout's).
func TestTextEditKeysKeepLayout(t *testing.T) {
	text := strings.Repeat("hello world, wrapped ", 8) + "\n" + strings.Repeat("日本 ", 9) + "\n|end"
	for _, k := range []string{"left", "right", "up", "down", "home", "end", "alt+left", "alt+right",
		"ctrl+home", "ctrl+end", "shift+left", "ctrl+v",
		"x", "日", "shift+enter", "backspace", "delete", "ctrl+w", "alt+d", "ctrl+k", "ctrl+u"} {
		t.Run(k, func(t *testing.T) {
			te := fromState(10, text)
			te.layout()
			n := te.layouts
			te.key(edKey(t, k))
			te.view(newEditStyles(true), "> ", "")
			if te.layouts != n {
				t.Fatalf("%s laid the text out again (%d times)", k, te.layouts-n)
			}
		})
	}
}

// rowTexts are the display rows as strings.
func rowTexts(te *textEdit) []string {
	var out []string
	for _, s := range te.layout() {
		out = append(out, string(te.buf[s.start:s.end]))
	}
	return out
}

func TestTextEditWrap(t *testing.T) {
	for _, c := range []struct {
		name  string
		width int
		text  string
		want  []string
	}{
		{"empty", 10, "", []string{""}},
		{"short", 10, "abc", []string{"abc"}},
		{"one short of the width", 10, "abcdefghi", []string{"abcdefghi"}},
		{"exact width leaves a row for the cursor", 10, "abcdefghij", []string{"abcdefghij", ""}},
		{"one past the width", 10, "abcdefghijk", []string{"abcdefghij", "k"}},
		{"words", 10, "hello world foo bar", []string{"hello ", "world foo ", "bar"}},
		{"long word breaks inside", 10, "abcdefghijklmnop", []string{"abcdefghij", "klmnop"}},
		{"space past the width starts the row", 5, "abcde fg", []string{"abcde", " fg"}},
		{"lines", 10, "a\n\nb", []string{"a", "", "b"}},
		{"trailing newline", 10, "a\n", []string{"a", ""}},
		{"wide at exact width", 10, "日本語日本語", []string{"日本語日本", "語"}},
		{"wide does not split", 5, "日本語", []string{"日本", "語"}},
		{"emoji", 4, "a🎉🎉", []string{"a🎉", "🎉"}},
		{"a flag is two cells", 5, "a🇺🇸b", []string{"a🇺🇸b"}},
		{"a joined emoji is two cells", 4, "👨‍👩‍👧a", []string{"👨‍👩‍👧a"}},
		{"tiny width", 0, "abc", []string{"ab", "c"}},
		{"a carried word still too wide", 3, " 本語", []string{" ", "本", "語"}},
		{"a tab reaches the next stop", 10, "abc\tde", []string{"abc\tde", ""}},
		{"a tab is a place to break", 10, "ab\tcdefgh", []string{"ab\t", "cdefgh"}},
		{"a row's end stops a tab", 10, "abcdefghi\tx", []string{"abcdefghi\t", "x"}},
		{"a tab at a full row's end starts the next", 10, "abcdefghij\tx", []string{"abcdefghij", "\tx"}},
		{"a tab carried to the next row spans from there", 10, "abcdefghij\txyz", []string{"abcdefghij", "\t", "xyz"}},
		{"a tab ending a row exactly leaves a row for the cursor", 10, "abcdefghi\t", []string{"abcdefghi\t", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := fromState(c.width, c.text+"|")
			got := rowTexts(te)
			if strings.Join(got, "¶") != strings.Join(c.want, "¶") {
				t.Fatalf("rows %q, want %q", got, c.want)
			}
		})
	}
}

// The wanted frames are what bubbles' textarea drew with the settings the
// editor had, so the UI looks the same without it.
func TestEditorView(t *testing.T) {
	type step struct {
		paste string
		keys  []string
	}
	for _, c := range []struct {
		name    string
		noColor bool
		width   int
		steps   []step
		want    string
	}{
		{"placeholder", true, 20, nil, "> \x1b[7mT\x1b[mype a prompt, /  "},
		{"placeholder coloured", false, 20, nil, "\x1b[37m> \x1b[m\x1b[7;37mT\x1b[m\x1b[38;5;240mype a prompt, /\x1b[m  "},
		{"cursor at the end", true, 20, []step{{paste: "hello"}}, "> hello\x1b[7m \x1b[m            "},
		{"cursor on a rune", true, 20, []step{{paste: "hello", keys: []string{"left", "left"}}}, "> hel\x1b[7ml\x1b[mo             "},
		{"cursor coloured", false, 20, []step{{paste: "hello", keys: []string{"left", "left"}}}, "\x1b[37m> \x1b[mhel\x1b[7;37ml\x1b[mo             "},
		{"exact width", true, 12, []step{{paste: "abcdefghij"}}, "> abcdefghij\n> \x1b[7m \x1b[m         "},
		{"word wrap", true, 12, []step{{paste: "hello world foo bar"}}, "> hello     \n> world foo \n> bar\x1b[7m \x1b[m      "},
		{"wide", true, 12, []step{{paste: "日本語日本語"}}, "> 日本語日本\n> 語\x1b[7m \x1b[m       "},
		{"a flag under the cursor", true, 12, []step{{paste: "🇺🇸", keys: []string{"left"}}}, "> \x1b[7m🇺🇸\x1b[m        "},
		{"an accent under the cursor", true, 12, []step{{paste: "e\u0301x", keys: []string{"home"}}}, "> \x1b[7me\u0301\x1b[mx        "},
		{"tab", true, 12, []step{{paste: "a\tb"}}, "> a       b\x1b[7m \x1b[m"},
		{"a tab under the cursor", true, 12, []step{{paste: "a\tb", keys: []string{"left", "left"}}}, "> a\x1b[7m       \x1b[mb "},
		{"tabs on a wrapped row", true, 12, []step{{paste: "abcdefghi\tx\ty"}}, "> abcdefghi \n> x       y\x1b[7m \x1b[m"},
		{"scrolled to the cursor", true, 12, []step{{paste: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"}},
			"> c         \n> d         \n> e         \n> f         \n> g         \n> h         \n> i         \n> j\x1b[7m \x1b[m        "},
		{"scrolled back to the top", true, 12, []step{{paste: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj", keys: []string{"ctrl+home"}}},
			"> \x1b[7ma\x1b[m         \n> b         \n> c         \n> d         \n> e         \n> f         \n> g         \n> h         "},
		{"up keeps the view until the cursor leaves it", true, 12, []step{{paste: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj", keys: []string{"up", "up", "up", "up", "up", "up", "up", "up"}}},
			"> b\x1b[7m \x1b[m        \n> c         \n> d         \n> e         \n> f         \n> g         \n> h         \n> i         "},
		{"shrinks after a delete", true, 12, []step{{paste: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj", keys: []string{"ctrl+home", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete", "ctrl+k", "delete"}}},
			"> \x1b[7mi\x1b[m         \n> j         "},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEditor(newStyles(c.noColor))
			e.setWidth(c.width)
			for _, s := range c.steps {
				if s.paste != "" {
					e.paste(s.paste)
				}
				for _, k := range s.keys {
					e.key(edKey(t, k))
				}
			}
			if got := e.view(); got != c.want {
				t.Fatalf("view\n%q, want\n%q", got, c.want)
			}
		})
	}
}

// A setValue (history, completion) or a reset puts the cursor in range and
// the view where it shows, and Up after it aims from its new column.
func TestTextEditSetValue(t *testing.T) {
	te := fromState(10, strings.Repeat("x\n", 20)+"|")
	te.setValue("short")
	if edState(te) != "short|" || te.top != 0 {
		t.Fatalf("after setValue: %q, top %d", edState(te), te.top)
	}
	te.setValue("")
	if edState(te) != "|" || te.height() != 1 {
		t.Fatalf("after reset: %q, height %d", edState(te), te.height())
	}
	te = fromState(10, "abcdef\nab\nabcd|ef")
	te.key(edKey(t, "up"))
	te.setValue("abcdef\nab")
	te.key(edKey(t, "up"))
	if edState(te) != "ab|cdef\nab" {
		t.Fatalf("up after setValue: %q", edState(te))
	}
}

// FuzzTextEdit presses any keys and pastes any text at any width: nothing
// panics, the value stays valid UTF-8 without controls but '\n' and tab, the
// cursor stays in the buffer and its row on screen, every row fits the
// width, and the view has one line per shown row.
func FuzzTextEdit(f *testing.F) {
	names := []string{"a", " ", "日", "🎉", "shift+enter", "backspace", "delete", "left", "right",
		"up", "down", "home", "end", "alt+left", "alt+right", "ctrl+w", "alt+d", "ctrl+k", "ctrl+u",
		"ctrl+home", "alt+>", "ctrl+a", "ctrl+e", "ctrl+v"}
	f.Add(10, []byte{0, 1, 2, 3, 4, 0, 7, 7, 9, 5, 13}, "hello world\r\n\tx")
	f.Add(3, []byte{200, 9, 9, 10, 15, 200, 6}, "日本語 🎉 abc\x1b[0m\xff")
	f.Add(40, []byte{200, 200, 200, 19, 9, 9, 9, 9, 9, 9, 9, 9, 9, 10}, strings.Repeat("line\n", 12))
	f.Add(12, []byte{200, 9, 10, 7, 200, 9, 9, 10, 5, 10, 8, 6}, "a\tbc\t\td\n\t日\t🇺🇸\tx yz\t")
	f.Fuzz(func(t *testing.T, width int, ops []byte, text string) {
		if width < -5 || width > 300 || len(ops) > 500 || len(text) > 2000 {
			t.Skip()
		}
		w := max(width, minEditWidth)
		st := newEditStyles(true)
		te := &textEdit{}
		te.setWidth(width)
		for _, op := range ops {
			if int(op) < len(names) {
				te.key(edKey(t, names[op]))
			} else {
				te.insert(text)
			}
			v := te.value()
			if !utf8.ValidString(v) {
				t.Fatalf("invalid UTF-8 %q", v)
			}
			if strings.ContainsFunc(v, func(r rune) bool { return r != '\n' && r != '\t' && r < ' ' }) {
				t.Fatalf("a control in %q", v)
			}
			if te.cur < 0 || te.cur > len(te.buf) {
				t.Fatalf("cursor %d in %d runes", te.cur, len(te.buf))
			}
			h := te.height()
			if r := te.cursorRow(); r < te.top || r >= te.top+h {
				t.Fatalf("cursor row %d outside rows %d..%d", r, te.top, te.top+h-1)
			}
			// The rows an edit laid out are those of a full layout.
			full := *te
			full.rows = nil
			if got, want := te.layout(), full.layout(); !slices.Equal(got, want) {
				t.Fatalf("rows %v, laid out in full %v", got, want)
			}
			if got, want := te.cells, te.measure(nil, 0, len(te.buf)); !slices.Equal(got, want) {
				t.Fatalf("cells %v, measured in full %v", got, want)
			}
			for i, s := range te.layout() {
				if n := te.col(i, s.end); n > w && s.end-s.start > 1 {
					t.Fatalf("row %d %q is %d wide at width %d", i, string(te.buf[s.start:s.end]), n, width)
				}
			}
			view := te.view(st, "> ", "")
			lines := strings.Split(view, "\n")
			if len(lines) != h {
				t.Fatalf("%d view lines, height %d", len(lines), h)
			}
			// Each line is the prompt, the row, a cell for a cursor past
			// its end, and spaces to the width, measured apart from the
			// editor's own widths.
			for i, l := range lines {
				r := te.top + i
				sp := te.layout()[r]
				row := tabsShown(string(te.buf[sp.start:sp.end]), w)
				used := ansi.StringWidth(row)
				if r == te.cursorRow() && te.cur == sp.end {
					row += " "
					used++
				}
				want := "> " + row + strings.Repeat(" ", max(0, w-used))
				if got := ansi.Strip(l); got != want {
					t.Fatalf("view line %d %q, want %q", r, got, want)
				}
				if used > w && sp.end-sp.start > 1 {
					t.Fatalf("row %d %q is %d wide at width %d", r, row, used, width)
				}
			}
			if ansi.Strip(view) == "" {
				t.Fatal("empty view")
			}
		}
	})
}

// tabsShown is a row as it shows w columns wide: a tab as the spaces to
// the next multiple of tabStop, or to w if that comes first, at least one.
func tabsShown(row string, w int) string {
	var b strings.Builder
	for _, r := range row {
		if r != '\t' {
			b.WriteRune(r)
			continue
		}
		col := ansi.StringWidth(b.String())
		b.WriteString(strings.Repeat(" ", max(min(tabStop-col%tabStop, w-col), 1)))
	}
	return b.String()
}

// Up and Down walk the draft's rows first and reach the history only from
// its first or last row.
func TestEditorHistoryByRow(t *testing.T) {
	m, _ := testModel(t, Options{})
	m.ed.push("older")
	m.Update(tea.WindowSizeMsg{Width: 12, Height: 20})
	m.Update(tea.PasteMsg{Content: "one\nhello worldwide"}) // three rows at width 10
	for i, want := range []string{"one\nhello worldwide", "one\nhello worldwide", "older"} {
		press(m, "up")
		if got := m.ed.value(); got != want {
			t.Fatalf("up %d: %q, want %q", i+1, got, want)
		}
	}
	press(m, "down")
	if got := m.ed.value(); got != "one\nhello worldwide" {
		t.Fatalf("down from the history: %q", got)
	}
}

func TestEditorHistoryDownByRow(t *testing.T) {
	m, _ := testModel(t, Options{})
	m.ed.push("a\nb")
	for i, c := range []struct{ key, want string }{
		{"up", "a\nb"}, {"up", "a\nb"}, {"down", "a\nb"}, {"down", ""},
	} {
		press(m, c.key)
		if got := m.ed.value(); got != c.want {
			t.Fatalf("key %d %s: %q, want %q", i+1, c.key, got, c.want)
		}
	}
}

// pastedLog is n runes of a log, lines of about 60, as a user pastes one
// to ask about it.
func pastedLog(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2025-03-01T12:%02d:%02dZ INFO worker %d: fetched %d items in %d ms\n", i/60%60, i%60, i%32, i%7, i%50)
	}
	return b.String()[:n]
}

// BenchmarkEditorKeys is one key and the editor's view after it, in a
// 90,000-rune paste with the cursor near its end: a cursor key each way
// (so the cursor stays where it is), and typing a rune and erasing it.
func BenchmarkEditorKeys(b *testing.B) {
	log := pastedLog(90_000)
	for _, c := range []struct{ name, key, back string }{
		{"left-right", "left", "right"},
		{"up-down", "up", "down"},
		{"home-end", "home", "end"},
		{"word", "alt+left", "alt+right"},
		{"type-erase", "x", "backspace"},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newEditor(newStyles(true))
			e.setWidth(120)
			e.cands = func(string) []string { return nil } // as the model's, it gets the whole text
			e.paste(log)
			e.key(edKey(b, "up"))
			keys := []tea.KeyPressMsg{edKey(b, c.key), edKey(b, c.back)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.key(keys[i%len(keys)])
				if e.view() == "" {
					b.Fatal("empty view")
				}
				i++
			}
		})
	}
}
