package tui

import (
	"context"
	"github.com/rally-agent/rally/internal/proctest"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/session"
)

// syncBuffer is an output the test reads while it is written.
type syncBuffer = proctest.Buffer

// panicking panics in Prompt (a bubbletea command) once the UI is on the
// alternate screen.
type panicking struct {
	*fakeSession
	out *syncBuffer
}

func (p panicking) Prompt(context.Context, string, session.PromptOptions) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(p.out.String(), altOn) {
			break
		}
	}
	panic("boom")
}

const (
	altOn  = "\x1b[?1049h"
	altOff = "\x1b[?1049l"
)

type blockingReader struct{ done chan struct{} }

func (r blockingReader) Read([]byte) (int, error) { <-r.done; return 0, io.EOF }

// TestRunPanicRestores checks that a panic inside the UI ends Run with an
// error, not a crash, after the terminal was put back: the output ends by
// leaving the alternate screen.
func TestRunPanicRestores(t *testing.T) {
	out := &syncBuffer{}
	in := blockingReader{make(chan struct{})}
	defer close(in.done)
	errc := make(chan error, 1)
	go func() {
		errc <- Run(context.Background(), Options{Session: panicking{newFake(), out}, FirstPrompt: "go"},
			RunOptions{Input: in, Output: out, Env: []string{"TERM=xterm-256color"}})
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "panic") {
			t.Fatalf("Run returned %v, want a panic error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the panic")
	}
	s := out.String()
	if !strings.Contains(s, altOn) {
		t.Fatalf("the UI never entered the alternate screen: %q", s)
	}
	if strings.LastIndex(s, altOff) < strings.LastIndex(s, altOn) {
		t.Fatalf("the alternate screen was not left at the end: %q", s[max(0, len(s)-200):])
	}
}
