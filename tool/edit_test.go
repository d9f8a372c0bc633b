package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	cases := []struct {
		name   string
		before string
		args   map[string]any // path is added
		after  string
		diff   string // the result after its first line
	}{
		{"one line", "a\nb\nc\n", map[string]any{"oldText": "b", "newText": "B"},
			"a\nB\nc\n", "@@ -2,1 +2,1 @@\n-b\n+B"},
		{"part of a line", "func f() {\n\treturn 1\n}\n", map[string]any{"oldText": "return 1", "newText": "return 2"},
			"func f() {\n\treturn 2\n}\n", "@@ -2,1 +2,1 @@\n-\treturn 1\n+\treturn 2"},
		{"grow", "a\nb\nc\n", map[string]any{"oldText": "b\n", "newText": "b1\nb2\nb3\n"},
			"a\nb1\nb2\nb3\nc\n", "@@ -2,1 +2,3 @@\n-b\n+b1\n+b2\n+b3"},
		{"delete lines", "a\nb\nc\n", map[string]any{"oldText": "b\n", "newText": ""},
			"a\nc\n", "@@ -2,1 +1,0 @@\n-b"},
		{"delete the last line", "a\nb\n", map[string]any{"oldText": "\nb", "newText": ""},
			"a\n", "@@ -2,1 +1,0 @@\n-b"},
		{"insert after a line", "a\nc\n", map[string]any{"oldText": "a\n", "newText": "a\nb\n"},
			"a\nb\nc\n", "@@ -1,0 +2,1 @@\n+b"},
		{"no final newline", "x = 1", map[string]any{"oldText": "1", "newText": "2"},
			"x = 2", "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2"},
		{"aliases", "a\nb\n", map[string]any{"old_string": "a", "new_string": "A"},
			"A\nb\n", "@@ -1,1 +1,1 @@\n-a\n+A"},
		{"same alias twice", "a\nb\n", map[string]any{"oldText": "a", "old_string": "a", "newText": "A"},
			"A\nb\n", "@@ -1,1 +1,1 @@\n-a\n+A"},
		{"crlf file, lf text", "one\r\ntwo\r\nthree\r\n", map[string]any{"oldText": "one\ntwo", "newText": "1\n2\n2.5"},
			"1\r\n2\r\n2.5\r\nthree\r\n", "@@ -1,2 +1,3 @@\n-one\n-two\n+1\n+2\n+2.5"},
		{"long diff cut", "a\n", map[string]any{"oldText": "a", "newText": strings.Repeat("x\n", 30) + "y"},
			strings.Repeat("x\n", 30) + "y\n", "@@ -1,1 +1,31 @@\n-a\n" + strings.Repeat("+x\n", 20) + "+… 11 lines more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "f.txt", c.before)
			c.args["path"] = "f.txt"
			res, err := call(t, Edit{Dir: dir}, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := readBack(t, p); got != c.after {
				t.Fatalf("file\n%q\nwant\n%q", got, c.after)
			}
			head, diff, _ := strings.Cut(textOf(res), "\n")
			if head != "edited "+p || diff != c.diff {
				t.Fatalf("result\n%s\n%s\nwant diff\n%s", head, diff, c.diff)
			}
			noTemps(t, dir)
		})
	}
}

// TestEditDiffCap: a change to huge lines (minified code) returns a
// bounded diff that says where to read the rest.
func TestEditDiffCap(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("v", 100<<10)
	p := writeFile(t, dir, "min.js", "head\n"+line+"A\n"+line+"B\n")
	res, err := call(t, Edit{Dir: dir, MaxDiffBytes: 3000}, map[string]any{"path": "min.js", "oldText": "A\n" + line + "B", "newText": "A\n" + line + "C"})
	if err != nil {
		t.Fatal(err)
	}
	got := textOf(res)
	if len(got) > 3500 {
		t.Fatalf("result is %d bytes", len(got))
	}
	for _, want := range []string{"@@ -3,1 +3,1 @@\n-vvv", " … [line cut at 2000 characters]", "[diff cut at ", "; read " + p + " with offset=3 to see the changed lines]"} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%.300s…%s", want, got, got[max(0, len(got)-300):])
		}
	}
}

func TestEditKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "run.sh", "#!/bin/sh\necho a\n")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, Edit{Dir: dir}, map[string]any{"path": p, "oldText": "echo a", "newText": "echo b"}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v, %v; want 0750", info.Mode(), err)
	}
}

func TestEditErrors(t *testing.T) {
	dir := t.TempDir()
	const src = "x := 1\nfoo()\n\tfoo()\nbar()\nfoo()\n"
	p := writeFile(t, dir, "f.go", src)
	writeFile(t, dir, "bin", "a\x00b")
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "big", strings.Repeat("x", 100))

	runErrCases(t, Edit{Dir: dir, MaxBytes: 99}, []errCase{
		{"missing path", map[string]any{"oldText": "a", "newText": "b"}, `missing required argument "path"`},
		{"missing oldText", map[string]any{"path": "f.go", "newText": "b"}, `missing required argument "oldText"`},
		{"missing newText", map[string]any{"path": "f.go", "oldText": "a"}, `missing required argument "newText"`},
		{"oldText not a string", map[string]any{"path": "f.go", "oldText": []int{1}, "newText": "b"}, `"oldText" must be a string, not array`},
		{"empty oldText", map[string]any{"path": "f.go", "oldText": "", "newText": "b"}, `"oldText" is empty`},
		{"no change", map[string]any{"path": "f.go", "oldText": "bar()", "newText": "bar()"}, "are the same"},
		{"aliases disagree", map[string]any{"path": "f.go", "oldText": "a", "old_string": "b", "newText": "c"},
			`both "oldText" and "old_string" are given and differ`},
		{"invalid json", `{"path":"f.go",`, "arguments are not valid JSON"},
		{"not found", map[string]any{"path": "f.go", "oldText": "baz()", "newText": "b"},
			`"oldText" was not found in ` + p},
		{"not found, whitespace", map[string]any{"path": "f.go", "oldText": "  bar()\n\n", "newText": "b"},
			"found when its leading and trailing whitespace is removed"},
		{"not found, indentation", map[string]any{"path": "f.go", "oldText": "  bar()\n  foo()\n", "newText": "b"},
			"Its first line, ignoring indentation, is at line 4"},
		{"ambiguous", map[string]any{"path": "f.go", "oldText": "foo()", "newText": "b"},
			`"oldText" occurs 3 times in ` + p + ` (at lines 2, 3, 5); it must occur exactly once`},
		{"missing file", map[string]any{"path": "nope", "oldText": "a", "newText": "b"}, "no such file or directory"},
		{"directory", map[string]any{"path": "d", "oldText": "a", "newText": "b"}, "is a directory"},
		{"binary", map[string]any{"path": "bin", "oldText": "a", "newText": "b"}, "looks like a binary file"},
		{"too big", map[string]any{"path": "big", "oldText": "x", "newText": "y"}, "more than the 99 bytes edit limit"},
	})
	if got := readBack(t, p); got != src {
		t.Fatalf("a failed edit changed the file: %q", got)
	}
	noTemps(t, dir)
}

func TestMatchLines(t *testing.T) {
	content := strings.Repeat("ab\n", 12)
	if got := matchLines(content, "ab", 3); got != "at lines 1, 2, 3, …" {
		t.Fatalf("got %q", got)
	}
	if got := matchLines("x\nab\nab", "ab", 5); got != "at lines 2, 3" {
		t.Fatalf("got %q", got)
	}
}
