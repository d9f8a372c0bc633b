package session

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// proxied is n exchanges of about 3.6 KB each whose answers report the
// usage a misbehaving proxy reports: 10 prompt tokens, whatever was sent.
func proxied(n int) []llm.Message {
	var ms []llm.Message
	for i := range n {
		ms = append(ms,
			llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(strings.Repeat("a longer question ", 200) + llm.Key(i))}},
			llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("ok")}, Usage: &llm.Usage{Input: 10, Output: 5}})
	}
	return ms
}

// TestImplausibleCountIgnored: an answer's count far below rally's own
// estimate of what was sent neither shrinks the size of the next request
// nor, through an overflow that states the real size, inflates the scale
// of every later estimate.
func TestImplausibleCountIgnored(t *testing.T) {
	hist := proxied(10) // 10 prompts, 36 KB
	s, _, stop := newSession(t, &fake{}, Config{Resume: &journal.Loaded{Messages: hist}})
	defer stop()
	est := llm.EstimateTokens(hist)
	if got := s.need(hist); got < est {
		t.Errorf("need %d, below the estimate %d of what is sent: the proxy's count of 10 was believed", got, est)
	}
	sent := append(hist, llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("next")}})
	s.calibrate(sent, retry.Report{Class: retry.ContextOverflow, Requested: est + est/10})
	if s.scale > 1.2 {
		t.Errorf("an overflow stating %d tokens for an estimate of %d taught a scale of %.2f", est+est/10, est, s.scale)
	}
}

// TestOverflowBehindAProxy: a 10-prompt conversation on an 8k server whose
// answers report 10 prompt tokens: the overflow states 9124 tokens, the
// session learns the window, compacts once with the normal keep, and the
// retried request is answered.
func TestOverflowBehindAProxy(t *testing.T) {
	overflow := apiErr(400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9124 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	f := &fake{steps: []step{{err: overflow}, {text: "## Goal\nthe summary"}, {text: "answer"}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: proxied(10)}})
	err := s.Prompt(t.Context(), "next", PromptOptions{})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(of[CompactionStartEvent](rec)); n != 1 {
		t.Errorf("%d compactions, want 1", n)
	}
	// The compaction kept the normal part (40%% of the window, three of
	// the 3.6 KB exchanges), not the smaller keep an inflated estimate
	// asks for, and the summary came in as few pieces as the window allows.
	n := f.calls()
	retried := f.request(n - 1)
	if retried.System == summaryPrompt || len(retried.Messages) < 6 || n > 4 {
		t.Errorf("%d calls, the retried request sends %d messages; want at most 4 calls and the summary, 2 or more kept exchanges and the prompt", n, len(retried.Messages))
	}
	if got := s.model().ContextWindow; got != 8192 {
		t.Errorf("window %d, want the 8192 the overflow stated", got)
	}
}
