package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestRenderPlain pins the layout of each block kind, without colour.
func TestRenderPlain(t *testing.T) {
	tests := []struct {
		name, src, want string
		width           int
	}{
		{"heading and emphasis", "# Title\n\nSome **bold** and *it* text", "# Title\n\nSome bold and it text", 80},
		{"soft break joins, hard break breaks", "one\ntwo  \nthree", "one two\nthree", 80},
		{"wraps at the width", "aaa bbb ccc ddd", "aaa bbb\nccc ddd", 7},
		{"tight list", "- one\n- two", "• one\n• two", 80},
		{"loose list", "- one\n\n- two", "• one\n\n• two", 80},
		{"ordered list from its start", "3. c\n4. d", "3. c\n4. d", 80},
		{"nested list indents under the text", "- a\n  - b", "• a\n  • b", 80},
		{"list item wraps under its text", "- aaa bbb", "• aaa\n  bbb", 5},
		{"quote", "> said\n> so", "│ said so", 80},
		{"fenced code keeps its lines", "```go\nfunc f() {\n\treturn\n}\n```", "  func f() {\n      return\n  }", 80},
		{"indented code", "    x := 1", "  x := 1", 80},
		{"long code line breaks at the width", "```\n" + strings.Repeat("x", 12) + "\n```", "  xxxxxxxx\n  xxxx", 10},
		{"link shows its address", "see [docs](https://x.test/d)", "see docs (https://x.test/d)", 80},
		{"autolink once", "at <https://x.test>", "at https://x.test", 80},
		{"inline code", "run `make` now", "run make now", 80},
		{"rule", "a\n\n---\n\nb", "a\n\n───\n\nb", 3},
		{"table", "| a | bb |\n|---|:--:|\n| 1 | 2 |", "a │ bb\n──┼───\n1 │ 2", 80},
		{"inline Markdown in cells", "| `x` | **y** |\n|---|---|\n| [a](u) | 2 |", "x     │ y\n──────┼──\na (u) │ 2", 80},
		{"pipes without a delimiter row are text", "| a |\n| b |", "| a | | b |", 80},
		{"escapes and entities", `1 \* 2 &amp; 3`, "1 * 2 & 3", 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.width, Plain).Render(tt.src); got != tt.want {
				t.Fatalf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestHighlight checks that each kind of token of a known language gets
// its colour, and that an unknown language is shown in the plain code
// colour.
func TestHighlight(t *testing.T) {
	r := New(80, Dark)
	code := r.st.code
	tests := []struct {
		name, src string
		want      []string // rendered pieces that must appear
	}{
		{"go", "```go\nfunc f() string { // note\n\treturn \"s\" + `r` + 42\n}\n```", []string{
			code[keyword].render("func"), code[builtin].render("string"), code[comment].render("// note"),
			code[keyword].render("return"), code[str].render(`"s"`), code[str].render("`r`"), code[number].render("42"),
		}},
		{"python", "```python\ndef f(): # c\n    return None\n```", []string{
			code[keyword].render("def"), code[comment].render("# c"), code[builtin].render("None"),
		}},
		{"shell with options after the language", "```bash title=x\necho 'a b' # c\n```", []string{
			code[builtin].render("echo"), code[str].render("'a b'"), code[comment].render("# c"),
		}},
		{"diff", "```diff\n-old\n+new\n```", []string{code[keyword].render("-old"), code[str].render("+new")}},
		{"unknown language", "```nosuch\nfunc x\n```", []string{code[plain].render("func x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := r.Render(tt.src)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q not in\n%q", w, out)
				}
			}
		})
	}
}

// TestStylesStayOnTheirLine: a block comment or string over several
// lines is coloured line by line, and every line ends with its styles
// reset, so the transcript can cut between any two lines.
func TestStylesStayOnTheirLine(t *testing.T) {
	r := New(40, Dark)
	out := r.Render("```go\n/* one\ntwo */ x := `a\nb`\n```\n\n**bold text that wraps over more than one line of forty columns**")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "\x1b[") && !strings.HasSuffix(line, "\x1b[m") {
			t.Errorf("line does not end reset: %q", line)
		}
	}
	for _, want := range []string{r.st.code[comment].render("two */"), r.st.code[str].render("b`")} {
		if !strings.Contains(out, want) {
			t.Errorf("%q not in %q", want, out)
		}
	}
}

// TestNestedEmphasis: the text after a code span inside bold is still
// bold (a reset from the inner span must not end the outer one).
func TestNestedEmphasis(t *testing.T) {
	r := New(80, Dark)
	out := r.Render("**a `c` b**")
	if want := r.st.text.bold().render(" b"); !strings.Contains(out, want) {
		t.Fatalf("%q not in %q", want, out)
	}
}

// TestWidth: no rendered line is wider than the width asked for.
func TestWidth(t *testing.T) {
	src := "# " + strings.Repeat("head ", 20) + "\n\n" + strings.Repeat("word ", 50) +
		"\n\n- " + strings.Repeat("item ", 30) + "\n\n> " + strings.Repeat("quoted ", 20) +
		"\n\n```go\n" + strings.Repeat("x", 100) + "\n```\n\n---\n"
	for _, w := range []int{20, 33, 80} {
		for _, th := range []Theme{Dark, Plain} {
			for _, line := range strings.Split(New(w, th).Render(src), "\n") {
				if n := ansi.StringWidth(line); n > w {
					t.Errorf("width %d: line of %d columns: %q", w, n, line)
				}
			}
		}
	}
}

// FuzzRender: whatever the bytes, Render returns (no panic).
func FuzzRender(f *testing.F) {
	for _, s := range []string{"# a", "```go\n`", "| a |\n|-|", "- a\n  > b\n    ```", "<div>\n", "\"\\", "/*"} {
		f.Add(s)
	}
	r := New(30, Dark)
	f.Fuzz(func(t *testing.T, s string) { r.Render(s) })
}
