package markdown

import (
	"strings"
	"testing"
)

// BenchmarkRender renders a 14 KB answer of headings, emphasis, lists and
// Go code at 100 columns, once per finished message in the UI (glamour
// took 4–10 times as long on the same text).
//
//	go test -run '^$' -bench Render -benchmem ./internal/markdown
func BenchmarkRender(b *testing.B) {
	part := "## Section\n\nSome **bold** text with `code` and a [link](http://x.test).\n\n- item one\n- item two\n\n" +
		"```go\nfunc f(x int) int { // double\n\treturn x * 2\n}\n```\n\n"
	src := strings.Repeat(part, 100)
	r := New(100, Dark)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		r.Render(src)
	}
}
