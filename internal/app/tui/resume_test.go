package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// TestResumedNotice: a stream that dropped and was resumed shows
// "reconnected, resuming (1/3)" in the status line while the transcript
// keeps the text streamed before the drop, drawn once, and appends the
// rest to it.
func TestResumedNotice(t *testing.T) {
	m, _ := testModel(t, Options{})
	typeText(m, "tell me")
	run(m, press(m, "enter"))
	ev(m, runStartMsg{})
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("tell me")}}})
	ev(m, assistantStartMsg{})
	ev(m, deltaMsg{text: "The answer begins"})
	retryStart(m, 1, 10*time.Millisecond)
	ev(m, resumedMsg{attempt: 1})
	ev(m, retryEndMsg{success: true, attempt: 1})
	if s := statusOf(m); !strings.Contains(s, "reconnected, resuming (1/3)") {
		t.Errorf("status line %q, want the resume notice", s)
	}
	ev(m, deltaMsg{text: " and goes on."})
	sc := screen(m)
	if n := strings.Count(sc, "The answer begins"); n != 1 || !strings.Contains(sc, "The answer begins and goes on.") {
		t.Errorf("transcript shows the resumed text %d times, want once, continued:\n%s", n, sc)
	}
}
