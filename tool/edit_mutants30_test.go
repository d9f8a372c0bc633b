package tool

import (
	"testing"
)

// TestEditErrorsAtTheEdges: each row catches a mutant that lived through
// the other tool tests (issue 30, third round): a file whose very first
// byte is NUL is binary (edit.go `IndexByte(data, 0) >= 0`); the hint for
// a missing oldText names every line (up to five) where its first line
// is, for a first line of exactly three characters too (`len(first) >= 3`,
// `len(at) == 5`), and says nothing of lines when there is none
// (`len(at) > 0`).
func TestEditErrorsAtTheEdges(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "nul", "\x00 then text")
	writeFile(t, dir, "f.go", "x := 1\nfoo()\n\tfoo()\nbar()\nfoo()\nabc\n")
	runErrCases(t, Edit{Dir: dir}, []errCase{
		{"binary from its first byte", map[string]any{"path": "nul", "oldText": "text", "newText": "b"}, "looks like a binary file"},
		{"first line found in several places", map[string]any{"path": "f.go", "oldText": "  foo()\n  nope", "newText": "b"},
			"Its first line, ignoring indentation, is at line 2, 3, 5; read the file again"},
		{"first line of three characters", map[string]any{"path": "f.go", "oldText": " abc\n nope", "newText": "b"},
			"Its first line, ignoring indentation, is at line 6;"},
		{"first line nowhere", map[string]any{"path": "f.go", "oldText": "baz()\nnope", "newText": "b"},
			"was not found in " + dir + "/f.go; it must match the file exactly, including whitespace, indentation and line breaks. Read the file again and copy the text from it"},
	})
}
