package session

import (
	"context"
	"testing"
)

// TestSettledCarriesTheResult: agent_settled carries what the operation's
// call returned, so a subscriber that started it (the terminal UI) has the
// outcome in order with the events, whichever of the two it sees first.
func TestSettledCarriesTheResult(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		op    func(ctx context.Context, s *Session) error
		fails bool
	}{
		{"prompt succeeds", []step{{text: "hello"}}, func(ctx context.Context, s *Session) error {
			return s.Prompt(ctx, "hi", PromptOptions{})
		}, false},
		{"prompt fails", []step{{err: badKey()}}, func(ctx context.Context, s *Session) error {
			return s.Prompt(ctx, "hi", PromptOptions{})
		}, true},
		{"nothing to compact", nil, func(ctx context.Context, s *Session) error {
			_, err := s.Compact(ctx)
			return err
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, rec, stop := newSession(t, &fake{steps: c.steps}, Config{})
			err := c.op(t.Context(), s)
			stop()
			if (err != nil) != c.fails {
				t.Fatalf("err %v, want a failure: %v", err, c.fails)
			}
			settled := of[AgentSettledEvent](rec)
			if len(settled) != 1 {
				t.Fatalf("%d agent_settled, want 1: %v", len(settled), rec.types())
			}
			if settled[0].Err != err {
				t.Errorf("agent_settled carries %v, the call returned %v", settled[0].Err, err)
			}
		})
	}
}
