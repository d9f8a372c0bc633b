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
