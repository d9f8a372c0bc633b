package tool

import (
	"strings"
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

// TestEditDiffOfRepeatedLines: the diff an edit shows is the change alone,
// placed where the edit made it, also when the lines around it repeat it
// (edit.go diff: the tail block ends at the match's own line, `j >= 0`;
// the common prefix and suffix stop at the shorter block, `pre < len(a)`,
// `suf < len(a)-pre`, `suf < len(b)-pre`).
func TestEditDiffOfRepeatedLines(t *testing.T) {
	for _, tt := range []struct {
		name, before, old, new, hunk string
	}{
		{"a line inserted after the match", "x\ny\n", "x", "x\ny", "@@ -1,0 +2,1 @@\n+y"},
		{"a line inserted above the match", "x\n", "x", "y\nx", "@@ -0,0 +1,1 @@\n+y"},
		{"a repeated line added", "x\nx\n", "x\nx", "x\nx\nx", "@@ -2,0 +3,1 @@\n+x"},
		{"a repeated line dropped", "x\nx\nx\n", "x\nx\nx", "x\nx", "@@ -3,1 +2,0 @@\n-x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "f", tt.before)
			res, err := call(t, Edit{Dir: dir}, map[string]any{"path": "f", "oldText": tt.old, "newText": tt.new})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(res); !strings.HasSuffix(got, "\n"+tt.hunk) {
				t.Errorf("result %q, want it to end with the hunk %q", got, tt.hunk)
			}
		})
	}
}

// TestEditDiffLimitsAreInclusive: a changed line of exactly DefaultLineLen
// characters shows whole (edit.go `len(l) > DefaultLineLen`), a diff of
// exactly MaxDiffBytes is not cut (capDiff `len(d) <= max`), and a longer
// one is cut at the end of its last whole line (`i > 0`).
func TestEditDiffLimitsAreInclusive(t *testing.T) {
	edit := func(t *testing.T, e Edit, newText string) string {
		t.Helper()
		e.Dir = t.TempDir()
		writeFile(t, e.Dir, "f", "a\nold\nz\n")
		res, err := call(t, e, map[string]any{"path": "f", "oldText": "old", "newText": newText})
		if err != nil {
			t.Fatal(err)
		}
		_, d, _ := strings.Cut(textOf(res), "\n")
		return d
	}
	t.Run("line of exactly the cap", func(t *testing.T) {
		line := strings.Repeat("n", DefaultLineLen)
		if d := edit(t, Edit{}, line); !strings.HasSuffix(d, "\n+"+line) {
			t.Errorf("a %d-character line did not show whole: %.80q…", DefaultLineLen, d[len(d)-80:])
		}
	})
	t.Run("diff of exactly the cap", func(t *testing.T) {
		whole := edit(t, Edit{}, "new\nlines\nhere")
		if d := edit(t, Edit{MaxDiffBytes: len(whole)}, "new\nlines\nhere"); d != whole {
			t.Errorf("a diff of exactly MaxDiffBytes %d was cut:\n%s", len(whole), d)
		}
	})
	t.Run("cut at a line's end", func(t *testing.T) {
		d := edit(t, Edit{MaxDiffBytes: 18}, "new\nlines\nhere") // 18 bytes end inside "-old"
		if !strings.HasPrefix(d, "@@ -2,1 +2,3 @@\n[diff cut at 15 bytes of 38 bytes;") {
			t.Errorf("the cut diff is\n%s\nwant only its whole first line before the note", d)
		}
	})
}
