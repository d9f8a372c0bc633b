package session

import (
	"context"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// ResetLearner is a Switcher that also knows when a credential's usage
// limit resets from what the provider stated on an earlier limit (auth's
// Rotation, from its marks). A usage limit that states no reset is then
// waited out to that reset under retry.waitForReset (retry.Attempt.Learned).
type ResetLearner interface {
	// LearnedReset returns when from's credential's limit resets, by an
	// earlier statement still ahead, or the zero time.
	LearnedReset(ctx context.Context, from llm.Target) time.Time
}

// learnedReset is how long until the reset an earlier limit of used's
// credential stated, asked only for a usage limit that states none while
// the policy waits for resets; 0 when nothing was learned.
func (s *Session) learnedReset(ctx context.Context, pol retry.Policy, used llm.Target, rep retry.Report) time.Duration {
	l, ok := s.cfg.Switcher.(ResetLearner)
	if !ok || rep.Class != retry.UsageLimit || rep.Hint > 0 || !pol.WaitForReset.Enabled {
		return 0
	}
	return max(0, l.LearnedReset(ctx, used).Sub(s.wall()))
}
