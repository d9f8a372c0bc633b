package auth

import (
	"context"
	"time"

	"github.com/rally-agent/rally/llm"
)

// LearnedReset returns when the usage limit of the credential a failed
// call used (from.Ref, as the rotation handed it out) resets, as the
// provider stated it on an earlier limit: the latest Mark.Reset of the
// marks that block that key and still lie ahead. The zero time means
// nothing was learned: no mark, a mark whose block was only the
// DefaultBlock guess, or a reset already past (or past its mark's end,
// which a store's bad writer could send). It implements the session's
// reset learner; the session waits a limit that states no reset out to
// it under retry.waitForReset, never longer than maxWaitMs.
func (r *Rotation) LearnedReset(ctx context.Context, from llm.Target) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.issued[from.Ref]
	if !ok {
		return time.Time{}
	}
	return r.learnedReset(ctx, c)
}

func (r *Rotation) learnedReset(ctx context.Context, from issued) time.Time {
	if from.cred.Key == "" {
		return time.Time{} // no key, no marks
	}
	return ResetAt(r.blocked(ctx, from.provider), from.cred, r.now())
}

// ResetAt is when c's usage limit resets as its provider stated it: the
// latest Mark.Reset of the marks that block c and still lie ahead of now,
// never after its mark's end; zero when no mark states one. The rotation
// waits to it and rally auth list shows it, by this one rule.
func ResetAt(marks []Mark, c Credential, now time.Time) time.Time {
	var at time.Time
	for _, m := range marks {
		if m.Blocks(c) && m.Reset.After(now) && !m.Reset.After(m.Until) && m.Reset.After(at) {
			at = m.Reset
		}
	}
	return at
}
