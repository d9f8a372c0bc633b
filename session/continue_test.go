package session

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// TestContinuationSeam: a Chat Completions stream (a vLLM-like server with
// continue_final_message) drops mid-answer; rally sends the partial back
// as the last assistant message, and the model, as models do, says the
// last five words again before going on. The user sees every word once:
// the same message, no message_discarded, a stream_resumed marked as a
// continuation.
func TestContinuationSeam(t *testing.T) {
	text := "Resuming a stream means the reader never sees a word twice, even when the model repeats itself at the seam of the continuation."
	for _, tc := range []struct {
		name   string
		repeat int
	}{
		{"repeats five words", 5},
		{"repeats nothing", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Step{Text: text, Fault: llmtest.Drop, After: 12, Delay: time.Millisecond}, llmtest.Step{Text: text, Repeat: tc.repeat})
			s, rec, _, stop := resumeOn(t, srv, llm.APIOpenAICompletions, true)
			if err := s.Prompt(t.Context(), "explain", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if got := streamed(rec); got != text {
				t.Errorf("shown %q\nwant  %q", got, text)
			}
			msgs := s.Messages()
			if len(msgs) != 2 || msgs[1].TextOf() != text {
				t.Errorf("messages %+v, want the prompt and the answer once", msgs)
			}
			if n := len(of[MessageDiscardedEvent](rec)); n != 0 {
				t.Errorf("%d message_discarded", n)
			}
			if res := of[StreamResumedEvent](rec); len(res) != 1 || !res[0].Continuation || res[0].Cursor != "" {
				t.Errorf("stream_resumed %+v, want one continuation", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want the call and its continuation", len(reqs))
			}
			if reqs[1].Messages != reqs[0].Messages+1 {
				t.Errorf("continuation of %d messages after %d, want the partial answer added", reqs[1].Messages, reqs[0].Messages)
			}
		})
	}
}
