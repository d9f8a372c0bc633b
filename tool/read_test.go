package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// numbered returns "1\n2\n…\nn\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	writeFile(t, dir, "abc.txt", "a\nb\nc\n")
	writeFile(t, dir, "noeol.txt", "a\nb")
	writeFile(t, dir, "ten.txt", numbered(10))
	writeFile(t, dir, "crlf.txt", "a\r\nb\r\n")
	writeFile(t, dir, "empty.txt", "")
	writeFile(t, dir, "long.txt", long+"\nnext\n")
	writeFile(t, dir, "utf8.txt", "ééééé\n")
	writeFile(t, dir, "latin1.txt", "caf\xe9 ok\n")
	writeFile(t, dir, "sub/deep.txt", "deep")
	writeFile(t, dir, "3000.txt", numbered(3000))
	writeFile(t, dir, "wide.txt", strings.Repeat(strings.Repeat("w", 999)+"\n", 100))

	cases := []struct {
		name string
		tool Read
		args map[string]any
		want string
	}{
		{"whole file", Read{}, map[string]any{"path": "abc.txt"}, "a\nb\nc"},
		{"no final newline", Read{}, map[string]any{"path": "noeol.txt"}, "a\nb"},
		{"subdirectory", Read{}, map[string]any{"path": "sub/deep.txt"}, "deep"},
		{"absolute path", Read{Dir: "/nonexistent"}, map[string]any{"path": filepath.Join(dir, "abc.txt")}, "a\nb\nc"},
		{"file_path alias", Read{}, map[string]any{"file_path": "abc.txt"}, "a\nb\nc"},
		{"offset and limit", Read{}, map[string]any{"path": "ten.txt", "offset": 3, "limit": 2},
			"3\n4\n\n[showing lines 3-4 of 10; use offset=5 to read more]"},
		{"offset to end", Read{}, map[string]any{"path": "ten.txt", "offset": 9},
			"9\n10\n\n[showing lines 9-10 of 10]"},
		{"offset zero is the start", Read{}, map[string]any{"path": "abc.txt", "offset": 0}, "a\nb\nc"},
		{"default limit", Read{MaxLines: 4}, map[string]any{"path": "ten.txt"},
			"1\n2\n3\n4\n\n[showing lines 1-4 of 10; use offset=5 to read more]"},
		{"limit capped at MaxLines", Read{MaxLines: 2}, map[string]any{"path": "ten.txt", "limit": 100},
			"1\n2\n\n[showing lines 1-2 of 10; use offset=3 to read more]"},
		{"byte cap", Read{MaxBytes: 5}, map[string]any{"path": "ten.txt"},
			"1\n2\n3\n\n[showing lines 1-3 of 10; use offset=4 to read more (output limit 5 bytes reached)]"},
		{"default caps: 2000 lines", Read{}, map[string]any{"path": "3000.txt"},
			strings.TrimSuffix(numbered(2000), "\n") + "\n\n[showing lines 1-2000 of 3000; use offset=2001 to read more]"},
		{"default caps: 50 KiB", Read{}, map[string]any{"path": "wide.txt"},
			strings.TrimSuffix(strings.Repeat(strings.Repeat("w", 999)+"\n", 51), "\n") +
				"\n\n[showing lines 1-51 of 100; use offset=52 to read more (output limit 50.0 KiB reached)]"},
		{"crlf", Read{}, map[string]any{"path": "crlf.txt"}, "a\nb"},
		{"empty", Read{}, map[string]any{"path": "empty.txt"}, "[" + filepath.Join(dir, "empty.txt") + " is empty]"},
		{"long line", Read{}, map[string]any{"path": "long.txt"},
			strings.Repeat("x", 2000) + " … [line cut at 2000 characters]\nnext\n\n" +
				"[1 line longer than 2000 characters cut; use bash to see them whole]"},
		{"skipping a long line", Read{}, map[string]any{"path": "long.txt", "offset": 2}, "next\n\n[showing lines 2-2 of 2]"},
		{"cut at a character boundary", Read{MaxLineLen: 5}, map[string]any{"path": "utf8.txt"},
			"éé … [line cut at 5 characters]\n\n[1 line longer than 5 characters cut; use bash to see them whole]"},
		{"invalid utf-8 replaced", Read{}, map[string]any{"path": "latin1.txt"}, "caf\uFFFD ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := c.tool
			if tl.Dir == "" {
				tl.Dir = dir
			}
			res, err := call(t, tl, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatal("IsError")
			}
			if got := textOf(res); got != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ten.txt", numbered(10))
	writeFile(t, dir, "bin", "ELF\x00\x01\x02 binary")
	writeFile(t, dir, "noise", strings.Repeat("\xff\xfe\x80abc", 100))
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	runErrCases(t, Read{Dir: dir}, []errCase{
		{"missing path", map[string]any{}, `missing required argument "path"`},
		{"empty path", map[string]any{"path": ""}, `"path" is empty`},
		{"path not a string", map[string]any{"path": 3}, `"path" must be a string, not number`},
		{"offset not an integer", map[string]any{"path": "ten.txt", "offset": "2"}, `"offset" must be an integer, not string`},
		{"negative offset", map[string]any{"path": "ten.txt", "offset": -1}, `"offset" must be at least 1`},
		{"negative limit", map[string]any{"path": "ten.txt", "limit": -5}, `"limit" must be at least 1`},
		{"invalid json", `{"path": "ten.txt"`, "arguments are not valid JSON"},
		{"not an object", `"ten.txt"`, "arguments must be a JSON object"},
		{"aliases disagree", map[string]any{"path": "a", "file_path": "b"}, `both "path" and "file_path" are given`},
		{"offset past end", map[string]any{"path": "ten.txt", "offset": 11}, "offset 11 is past the end"},
		{"missing file", map[string]any{"path": "nope.txt"}, "nope.txt: no such file or directory"},
		{"directory", map[string]any{"path": "d"}, "is a directory"},
		{"binary with nul", map[string]any{"path": "bin"}, "looks like a binary file"},
		{"binary without nul", map[string]any{"path": "noise"}, "looks like a binary file"},
	})
}

func TestReadCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a", "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read{Dir: dir}.Run(ctx, []byte(`{"path":"a"}`))
	if err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("got %v", err)
	}
}

func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	// The name lies: the content decides.
	writeFile(t, dir, "pic.dat", buf.String())

	res, err := call(t, Read{Dir: dir}, map[string]any{"path": "pic.dat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || res.Content[1].Type != llm.ImageType {
		t.Fatalf("content %+v", res.Content)
	}
	img := res.Content[1]
	if img.MimeType != "image/png" {
		t.Fatalf("mime %q", img.MimeType)
	}
	data, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil || !bytes.Equal(data, buf.Bytes()) {
		t.Fatalf("data does not round-trip: %v", err)
	}
	if !strings.Contains(textOf(res), "image/png") {
		t.Fatalf("text %q", textOf(res))
	}

	runErrCases(t, Read{Dir: dir, MaxImage: 10}, []errCase{
		{"image too large", map[string]any{"path": "pic.dat"}, "more than the 10 bytes limit"},
	})
}
