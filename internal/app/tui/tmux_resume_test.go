package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestTmuxResumedStream: with retry.streaming "resume" on a Responses
// provider that opted in, a stream that drops mid-answer goes on where it
// stopped: the status line says "reconnected, resuming (1/3)" while the
// answer keeps growing in place, its start drawn once, and the fake LLM
// saw the call and one resume (GET with starting_after), no second call.
func TestTmuxResumedStream(t *testing.T) {
	text := "Alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november."
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Drop, After: 4, Text: text, Chunks: 14, Delay: 60 * time.Millisecond})
	settings := `{"retry":{"baseDelayMs":200,"streaming":"resume"},"providers":{"custom":{"api":"openai-responses","baseUrl":"` + srv.URL + `/v1","resume":true}}}`
	p := startRally(t, srv, 90, 24, settings, "--api", "openai-responses", "Tell me the alphabet")
	s := p.waitText("reconnected, resuming (1/3)")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "reconnected, resuming (1/3)") {
		t.Fatalf("the notice is not in the status line %q:\n%s", last, s)
	}
	s = p.waitFor("the full answer", func(s string) bool { return strings.Contains(s, "november.") && idle(s) })
	if n := strings.Count(s, "Alpha bravo"); n != 1 {
		t.Fatalf("the answer's start shows %d times:\n%s", n, s)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Method != "GET" || !strings.HasPrefix(reqs[1].Outcome, "resumed after") {
		t.Fatalf("requests %+v, want the call and one resume", reqs)
	}
}
