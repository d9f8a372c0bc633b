package session

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestResumeCountedAndRecorded: a dropped stream resumed counts as one
// retry in State, and the session file says how it was resumed: from the
// Responses cursor, or as a Chat Completions continuation. Mutants caught
// (resume.go:53 and :89, alive in this round's diff run): the count
// decremented, and the two ways' reasons swapped.
func TestResumeCountedAndRecorded(t *testing.T) {
	text := strings.Repeat("word ", 40)
	for _, tc := range []struct {
		api, reason string
	}{
		{llm.APIOpenAIResponses, "resumed from cursor "}, // and the event's sequence number
		{llm.APIOpenAICompletions, "resumed as a continuation"},
	} {
		t.Run(tc.api, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Step{Text: text, Fault: llmtest.Drop, After: 28, Delay: time.Millisecond}, llmtest.Step{Text: text})
			s, rec, j, stop := resumeOn(t, srv, tc.api, true)
			if err := s.Prompt(t.Context(), "write", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if len(of[StreamResumedEvent](rec)) != 1 {
				t.Fatalf("events %v, want one stream_resumed", rec.types())
			}
			if n := s.State().Retries; n != 1 {
				t.Errorf("Retries %d after one resume, want 1", n)
			}
			j.Close()
			loaded, err := journal.Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, e := range loaded.Entries {
				if d := e.Decision(); d != nil && d.End == journal.EndResumed {
					reasons = append(reasons, d.Reason)
				}
			}
			if len(reasons) != 1 || !strings.HasPrefix(reasons[0], tc.reason) {
				t.Errorf("resumed decisions %q, want %q", reasons, tc.reason)
			}
		})
	}
}
