package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// TestLonePromptTooLargeWithOverhead: a prompt that fits the window by
// itself but not with what every request carries (the system prompt and
// tools), or not once an overflow taught that the estimate runs short, is
// refused as too large: no call for a known window, no compaction after
// the overflow that taught it. Bug caught (issue 30): the prompt's size
// measured without the overhead and the calibration, so it was sent, and
// compacted for, three times.
func TestLonePromptTooLargeWithOverhead(t *testing.T) {
	prompt := strings.Repeat("all work and no play ", 120) // ~630 tokens
	t.Run("with the system prompt", func(t *testing.T) {
		f := &fake{}
		s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1000},
			System: strings.Repeat("you are a careful agent. ", 100)}) // ~625 tokens
		err := s.Prompt(t.Context(), prompt, PromptOptions{})
		stop()
		var tl *TooLargeError
		if !errors.As(err, &tl) || !tl.Prompt || tl.Need <= 1000 || f.calls() != 0 || len(of[CompactionStartEvent](rec)) != 0 {
			t.Fatalf("err %v after %d calls and %d compactions; want the prompt refused with no call", err, f.calls(), len(of[CompactionStartEvent](rec)))
		}
	})
	t.Run("calibrated", func(t *testing.T) {
		// The provider counts the request at twice rally's estimate.
		f := &fake{steps: []step{{err: statedOverflow(1000, 2*llm.EstimateTokens([]llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(prompt)}}}))}}}
		s, rec, stop := newSession(t, f, Config{})
		err := s.Prompt(t.Context(), prompt, PromptOptions{})
		stop()
		var tl *TooLargeError
		if !errors.As(err, &tl) || !tl.Prompt || f.calls() != 1 || len(of[CompactionStartEvent](rec)) != 0 {
			t.Fatalf("err %v after %d calls and %d compactions; want the prompt refused after the one call", err, f.calls(), len(of[CompactionStartEvent](rec)))
		}
	})
}

// TestOverheadCountsSystemAndTools: what every request carries is the
// system prompt and each tool's name, description and schema, plus a few
// characters of framing per tool, at four characters a token, rounded up.
// Bugs caught (surviving mutants): any of the parts subtracted instead of
// added, and the rounding turned into a cut (the lone-prompt test above
// only needs the overhead to be large).
func TestOverheadCountsSystemAndTools(t *testing.T) {
	system := strings.Repeat("s", 401)
	c := &counter{}
	sp := c.Spec()
	chars := len(system) + 2*(len(sp.Name)+len(sp.Description)+len(sp.Parameters)+16)
	for _, tt := range []struct {
		name   string
		cfg    Config
		tokens int
	}{
		{"system prompt", Config{System: system}, (len(system) + 3) / 4},
		{"system prompt and two tools", Config{System: system, Tools: []tool.Tool{c, c}}, (chars + 3) / 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, stop := newSession(t, &fake{}, tt.cfg)
			defer stop()
			if got := s.overhead(); got != tt.tokens {
				t.Errorf("overhead %d tokens, want %d", got, tt.tokens)
			}
		})
	}
}
