//go:build unix

package tool

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDenyHomeSpelling: a command naming the denied file under ~ is
// refused. Bug caught (issue 30): the ~/ spelling dropped from the
// mention check, so `cat ~/.rally/auth.json` ran; $HOME/… was still
// caught, which is why TestDeny (it names the file by $RALLY_HOME) passed.
func TestDenyHomeSpelling(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	secret := writeFile(t, home, filepath.Join(".rally", "auth.json"), `{"providers":{"x":[{"id":"a","key":"sk-secret"}]}}`)
	b := &Bash{Dir: t.TempDir(), Deny: []string{secret}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home}}
	for _, command := range []string{"cat ~/.rally/auth.json", "grep -h key ~/.rally/auth.json /dev/null"} {
		t.Run(command, func(t *testing.T) {
			res, err := call(t, b, map[string]any{"command": command})
			if err == nil || !strings.Contains(err.Error(), secret+" is off limits to tools") {
				t.Fatalf("not refused (the command ran, %d bytes of output): %v", len(textOf(res)), err)
			}
		})
	}
}

// TestCaptureBoundedUnderSmallWrites: output kept in memory stays within
// twice the cap however it arrives, and what is shown is its end. Bug
// caught (issue 30): the trim of the kept buffer lost, so 100,000 writes
// of 64 bytes kept all 6.4 MB (only writes as large as the cap were cut).
func TestCaptureBoundedUnderSmallWrites(t *testing.T) {
	const max = 1024
	c := &capture{max: max, maxLines: 1 << 30, dir: t.TempDir(), spillMax: 0}
	line := []byte(strings.Repeat("x", 63) + "\n")
	for range 100_000 {
		c.Write(line)
		if len(c.buf) > 2*max {
			t.Fatalf("%d bytes kept in memory after %d written, want at most %d", len(c.buf), c.total, 2*max)
		}
	}
	c.close()
	body, note := c.text()
	// The end of the output, in whole lines, nearly the cap of it (the
	// first line kept may be cut, so it is dropped).
	if n := len(body) / len(line); body != string(bytes.Repeat(line, n)) || len(body) < max-len(line) || note == "" {
		t.Errorf("shown %d bytes (note %q), want the last %d bytes or so in whole lines", len(body), note, max)
	}
}

// TestCaptureSpillEdges: the saved file at the edges of its rules. Bugs
// caught (surviving mutants): the bound on the saved file not counting
// what earlier writes saved; an output of exactly the line cap plus an
// unfinished line never saved; and the saved file of an output that fits
// after all (exactly the byte and line caps) left behind in the temp dir.
func TestCaptureSpillEdges(t *testing.T) {
	saved := func(t *testing.T, dir string) []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(dir, "rally-bash-*.out"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	t.Run("bounded across writes", func(t *testing.T) {
		dir := t.TempDir()
		c := &capture{max: 4, maxLines: 10, dir: dir, spillMax: 6}
		for _, w := range []string{"0123", "4567", "89"} {
			c.Write([]byte(w))
		}
		c.close()
		files := saved(t, dir)
		if len(files) != 1 {
			t.Fatalf("saved files %v", files)
		}
		if b, _ := os.ReadFile(files[0]); string(b) != "012345" {
			t.Errorf("saved %q, want the first 6 bytes", b)
		}
	})
	t.Run("line cap and an unfinished line", func(t *testing.T) {
		dir := t.TempDir()
		c := &capture{max: 1 << 10, maxLines: 3, dir: dir, spillMax: DefaultSpillBytes}
		for _, w := range []string{"a\n", "b\n", "c\n", "d"} {
			c.Write([]byte(w))
		}
		c.close()
		if _, note := c.text(); !strings.Contains(note, "The whole output is saved in") {
			t.Errorf("note %q, want the saved file named", note)
		}
	})
	t.Run("fits exactly", func(t *testing.T) {
		dir := t.TempDir()
		c := &capture{max: 8, maxLines: 2, dir: dir, spillMax: DefaultSpillBytes}
		c.Write([]byte("abc\n"))
		c.Write([]byte("def\n"))
		c.close()
		body, note := c.text()
		if files := saved(t, dir); body != "abc\ndef\n" || note != "" || len(files) != 0 {
			t.Errorf("body %q, note %q, files %v; want the whole output and no file", body, note, files)
		}
	})
}

// TestCaptureCutAtALine: a cut output starts after the first newline of
// the part kept when that newline is in its first 1 KB and is not its
// last byte. Bugs caught (surviving mutants): a newline at the very start
// kept, one at exactly 1 KB taken as near, and one at the very end
// cutting the shown output to nothing.
func TestCaptureCutAtALine(t *testing.T) {
	for _, tt := range []struct {
		name, out, want string
		max             int
	}{
		{"newline first", "abcde\nxyz", "xyz", 4},
		{"newline last", "abcdefg\n", "efg\n", 4},
		{"newline at 1 KB", strings.Repeat("a", 1000) + strings.Repeat("b", 1024) + "\n" + strings.Repeat("c", 975), strings.Repeat("b", 1024) + "\n" + strings.Repeat("c", 975), 2000},
		{"newline before 1 KB", strings.Repeat("a", 1000) + strings.Repeat("b", 1023) + "\n" + strings.Repeat("c", 976), strings.Repeat("c", 976), 2000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &capture{max: tt.max, maxLines: 1 << 20, dir: t.TempDir(), spillMax: DefaultSpillBytes}
			c.Write([]byte(tt.out))
			c.close()
			if body, _ := c.text(); body != tt.want {
				t.Errorf("body %q (%d bytes), want %d bytes", body[:min(len(body), 20)], len(body), len(tt.want))
			}
		})
	}
}

// TestCaptureLineCapWithEmptyLines: the line cap counts an empty line as
// a line. Bug caught (a surviving mutant): an empty line taken for the
// end of the output, which showed nothing of an output cut by lines.
func TestCaptureLineCapWithEmptyLines(t *testing.T) {
	c := &capture{max: 1 << 10, maxLines: 2, dir: t.TempDir(), spillMax: DefaultSpillBytes}
	c.Write([]byte("a\n\nb\nc\n"))
	c.close()
	if body, _ := c.text(); body != "b\nc\n" {
		t.Errorf("body %q, want the last 2 lines", body)
	}
}
