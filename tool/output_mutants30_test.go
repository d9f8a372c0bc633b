package tool

import (
	"strings"
	"testing"
)

// TestBashBinaryTailShowsNothingBroken (a mutant that lived, issue 30
// third round: output.go text, `len(b) > 0`): an output cut to a tail
// that is all UTF-8 continuation bytes (binary output) shows an empty body
// and the note, instead of reading past the empty tail.
func TestBashBinaryTailShowsNothingBroken(t *testing.T) {
	res, err := call(t, Bash{Dir: t.TempDir(), MaxOutput: 16}, map[string]any{"command": `head -c 100 /dev/zero | tr '\000' '\200'`})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); !strings.HasPrefix(got, "[output cut: it was 100 bytes in 1 line; showing the last 0 lines") {
		t.Errorf("result %q, want an empty tail and the note", got)
	}
}

// TestProcsKillWithoutCommands (a mutant that lived: procs.go Kill,
// `p.done != nil`): a program that never ran bash can still kill its
// Procs on the way out, and bash refuses commands after that.
func TestProcsKillWithoutCommands(t *testing.T) {
	var p Procs
	p.Kill()
	p.Kill()
	if _, err := call(t, Bash{Dir: t.TempDir(), Procs: &p}, map[string]any{"command": "echo hi"}); err == nil {
		t.Error("bash ran a command after Kill")
	}
}
