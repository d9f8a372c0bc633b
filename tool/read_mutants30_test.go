package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// abortAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: an abort that lands while a tool is working,
// at a point the test picks, not at a time it hopes for.
type abortAfter struct {
	context.Context
	n atomic.Int64
}

func (c *abortAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadChecksAbortAsItGoes (a mutant that lived, issue 30 third round:
// read.go `n%ctxCheckEveryLines` made `n*ctxCheckEveryLines`): a read of a
// long file looks for an abort every ctxCheckEveryLines lines, not only
// before it starts. The context passes the check before the file is
// opened and the one before its first line, and is aborted from then on.
func TestReadChecksAbortAsItGoes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "long", strings.Repeat("line\n", 3*ctxCheckEveryLines))
	ctx := &abortAfter{Context: context.Background()}
	ctx.n.Store(2)
	_, err := Read{Dir: dir}.Run(ctx, json.RawMessage(`{"path":"long"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want the abort that came within the file", err)
	}
}

// TestReadShowsTheFirstLinePastTheCap (a mutant that lived: read.go
// `last > 0 && …`): the first line asked for is shown even when it alone
// is over the byte cap, so a read always makes progress; the cap stops
// the lines after it.
func TestReadShowsTheFirstLinePastTheCap(t *testing.T) {
	dir := t.TempDir()
	first := strings.Repeat("w", 30)
	writeFile(t, dir, "f", first+"\nsecond\n")
	res, err := call(t, Read{Dir: dir, MaxBytes: 10}, map[string]any{"path": "f"})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); !strings.HasPrefix(got, first+"\n\n[showing lines 1-1 of 2; use offset=2 to read more") {
		t.Errorf("result %q, want the first line and a note to read on", got)
	}
}

// TestReadLineCutEdges (mutants that lived: read.go nextLine
// `len(frag) > room`, trimRune `i >= 0` and `i--`, isBinary
// `IndexByte(head, 0) >= 0`): a line of exactly MaxLineLen bytes is whole;
// a cut inside a multi-byte character drops the partial character,
// whether it started the line or not; a file whose very first byte is NUL
// is binary.
func TestReadLineCutEdges(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		maxLineLen    int
		want          string // the start of the result
	}{
		{"exactly the cap", "abcd\n", 4, "abcd"},
		{"cut inside the first character", "€€\n", 2, " … [line cut at 2 characters]"},
		{"cut inside a later character", "ab€\n", 4, "ab … [line cut at 4 characters]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "f", tt.content)
			res, err := call(t, Read{Dir: dir, MaxLineLen: tt.maxLineLen}, map[string]any{"path": "f"})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(res); got != tt.want && !strings.HasPrefix(got, tt.want+"\n") {
				t.Errorf("result %q, want it to start with the line %q", got, tt.want)
			}
		})
	}
	t.Run("NUL first", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "f", "\x00 then text")
		if _, err := call(t, Read{Dir: dir}, map[string]any{"path": "f"}); err == nil || !strings.Contains(err.Error(), "looks like a binary file") {
			t.Errorf("err %v, want the file refused as binary", err)
		}
	})
}
