package print

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// On a terminal the retry wait counts down in place, once a second, and
// ends as the plain notice a pipe gets; --verbose ends with a summary.
func TestCountdownAndSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		var errw syncBuffer
		to := NewText(&out, &errw, Options{TTY: true, Verbose: true})
		start := time.Now()
		to.Event(session.AgentStartEvent{})
		to.Event(session.MessageEndEvent{Message: &llm.Message{Role: llm.Assistant, StopReason: llm.Error,
			Usage: &llm.Usage{Input: 100, Cost: llm.Cost{Total: 0.001}}}})
		to.Event(session.AutoRetryStartEvent{Attempt: 1, MaxAttempts: 3, DelayMs: 3000, ErrorMessage: "503 overloaded"})
		time.Sleep(2500 * time.Millisecond) // fake time: two ticks
		synctest.Wait()
		live := errw.String()
		want := "\r\x1b[Krally: retrying (1/3) in 3s…\r\x1b[Krally: retrying (1/3) in 2s…\r\x1b[Krally: retrying (1/3) in 1s…"
		if live != want {
			t.Errorf("during the wait stderr is\n%q\nwant\n%q", live, want)
		}
		time.Sleep(500 * time.Millisecond) // the deadline: the last tick says "now"
		synctest.Wait()
		if got := strings.TrimPrefix(errw.String(), live); got != "\r\x1b[Krally: retrying (1/3) now…" {
			t.Errorf("at the deadline stderr adds %q", got)
		}
		live = errw.String()
		to.Event(session.AgentStartEvent{}) // the retried call
		to.Event(session.MessageEndEvent{Message: &llm.Message{Role: llm.Assistant, StopReason: llm.Stop,
			Content: []llm.Content{{Type: llm.TextType, Text: "the answer"}}, Usage: &llm.Usage{Input: 120, Output: 30, Cost: llm.Cost{Total: 0.0025}}}})
		to.Event(session.AutoRetryEndEvent{Success: true, Attempt: 1})
		time.Sleep(5 * time.Second) // no tick after the wait ended
		synctest.Wait()
		to.Finish(nil)
		if d := time.Since(start); d != 8*time.Second {
			t.Fatalf("fake clock moved %s", d)
		}
		rest := strings.TrimPrefix(errw.String(), live)
		wantRest := "\r\x1b[Krally: retrying (1/3) in 3s: 503 overloaded\n" +
			"rally: retry 1 succeeded\n" +
			"rally: 2 calls · 250 tokens (220 in, 30 out) · $0.0035 · 1 retry · 8s\n"
		if rest != wantRest {
			t.Errorf("after the wait stderr is\n%q\nwant\n%q", rest, wantRest)
		}
		if out.String() != "the answer\n" {
			t.Errorf("stdout %q", out.String())
		}
	})
}

// Into a pipe the notice is one plain line, at once, and there is no
// summary without --verbose.
func TestRetryNoticeIntoAPipe(t *testing.T) {
	var out, errw bytes.Buffer
	to := NewText(&out, &errw, Options{})
	to.Event(session.AutoRetryStartEvent{Attempt: 2, MaxAttempts: 3, DelayMs: 4000, ErrorMessage: "503 overloaded"})
	to.Finish(nil)
	if got := errw.String(); got != "rally: retrying (2/3) in 4s: 503 overloaded\n" {
		t.Errorf("stderr %q", got)
	}
}

// syncBuffer is stderr that the countdown's ticker writes while the test reads.
type syncBuffer = proctest.Buffer
