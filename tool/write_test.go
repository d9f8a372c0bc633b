package tool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readBack returns a file's content, failing the test if it cannot.
func readBack(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails if a write left a temporary file in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	target := writeFile(t, dir, "target.txt", "old")
	if err := os.Symlink(target, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		args    map[string]any
		file    string // checked for content
		content string
		want    string // in the result text
	}{
		{"create with parents", map[string]any{"path": "a/b/c.txt", "content": "hi\nthere\n"},
			"a/b/c.txt", "hi\nthere\n", "created " + filepath.Join(dir, "a/b/c.txt") + ": 9 bytes, 2 lines"},
		{"overwrite", map[string]any{"path": "a/b/c.txt", "content": "x"},
			"a/b/c.txt", "x", "wrote " + filepath.Join(dir, "a/b/c.txt") + ": 1 bytes, 1 line"},
		{"empty content", map[string]any{"path": "empty.txt", "content": ""}, "empty.txt", "", "0 bytes, 0 lines"},
		{"absolute path", map[string]any{"path": filepath.Join(dir, "abs.txt"), "content": "abs"}, "abs.txt", "abs", "created"},
		{"file_path alias", map[string]any{"file_path": "alias.txt", "content": "al"}, "alias.txt", "al", "created"},
		{"keeps mode", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}, "run.sh", "#!/bin/sh\necho hi\n", "wrote"},
		{"through symlink", map[string]any{"path": "link.txt", "content": "new"}, "target.txt", "new", "wrote"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := call(t, Write{Dir: dir}, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(res); res.IsError || !strings.Contains(got, c.want) {
				t.Fatalf("result %q, want %q", got, c.want)
			}
			if got := readBack(t, filepath.Join(dir, c.file)); got != c.content {
				t.Fatalf("file holds %q, want %q", got, c.content)
			}
		})
	}

	if info, err := os.Stat(script); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("script mode %v, %v; want 0755", info.Mode(), err)
	}
	if info, err := os.Stat(filepath.Join(dir, "abs.txt")); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, %v; want 0644", info.Mode(), err)
	}
	if info, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink: %v, %v", info.Mode(), err)
	}
	noTemps(t, dir)
	noTemps(t, filepath.Join(dir, "a/b"))
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "file", "x")
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	runErrCases(t, Write{Dir: dir}, []errCase{
		{"missing path", map[string]any{"content": "x"}, `missing required argument "path"`},
		{"missing content", map[string]any{"path": "a"}, `missing required argument "content"`},
		{"content not a string", map[string]any{"path": "a", "content": 5}, `"content" must be a string, not number`},
		{"null content", `{"path":"a","content":null}`, `missing required argument "content"`},
		{"invalid json", `{`, "arguments are not valid JSON"},
		{"directory", map[string]any{"path": "d", "content": "x"}, "is a directory"},
		{"parent is a file", map[string]any{"path": "file/x.txt", "content": "x"}, "cannot create directory"},
	})
	noTemps(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Write{Dir: dir}).Run(ctx, []byte(`{"path":"c","content":"x"}`)); err == nil {
		t.Fatal("cancelled: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
		t.Fatal("cancelled write created the file")
	}
}
