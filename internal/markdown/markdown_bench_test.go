package markdown

import (
	"strings"
	"testing"
)

// BenchmarkRender renders a 14 KB answer of headings, emphasis, lists and
// Go code at 100 columns, once per finished message in the UI (glamour
// took 4–10 times as long on the same text), and 14 KB of block
// structure alone (quotes, nested lists, rules, headings and short
// paragraphs, no colour, no wrapping), where the block parser's share is
// the most.
//
//	go test -run '^$' -bench Render -benchmem ./internal/markdown
func BenchmarkRender(b *testing.B) {
	for _, tt := range []struct {
		name, part string
		width      int
		theme      Theme
	}{
		{"answer", "## Section\n\nSome **bold** text with `code` and a [link](http://x.test).\n\n- item one\n- item two\n\n" +
			"```go\nfunc f(x int) int { // double\n\treturn x * 2\n}\n```\n\n", 100, Dark},
		{"structure", "# Title\n\n> quoted\n> and lazy\nstill quoted\n\n- one\n- two\n  - nested\n    more\n  - three\n" +
			"1. first\n2. second\n\n---\n\nA paragraph\nover two lines.\n\n", 0, Plain},
	} {
		b.Run(tt.name, func(b *testing.B) {
			src := strings.Repeat(tt.part, 100)
			r := New(tt.width, tt.theme)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				r.Render(src)
			}
		})
	}
}

// BenchmarkRenderHostile renders 20 KB answers built to make a parser
// rescan the rest of the text at every byte: brackets around a shortcut
// reference, bare ampersands, unclosed angle brackets, comments,
// instructions, declarations and attribute values, or to join the rest
// of a paragraph at each of its reference definitions, or to read the
// rest of the text for each quote that a line without its marker ends. Each must cost
// about what plain text of its size does (it was 0.68 s, 0.53 s for
// 200 KB, and growing with the square of the size).
func BenchmarkRenderHostile(b *testing.B) {
	for _, tt := range []struct{ name, src string }{
		{"brackets", "[a]: u\n\n" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
		{"ampersands", strings.Repeat("&", 20000)},
		{"angles", strings.Repeat("<a ", 7000)},
		{"comments", "x " + strings.Repeat("<!--", 5000)},
		{"instructions", "x " + strings.Repeat("<?", 10000)},
		{"declarations", "x " + strings.Repeat("<!A", 7000)},
		{"quotes", "x " + strings.Repeat(`<a b='`, 3500)},
		{"definitions", strings.Repeat("[a]: u\n", 3000) + "[a]"},
		{"lazy", strings.Repeat("> ```\nx\n", 2500)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			r := New(100, Plain)
			b.SetBytes(int64(len(tt.src)))
			for b.Loop() {
				r.Render(tt.src)
			}
		})
	}
}
