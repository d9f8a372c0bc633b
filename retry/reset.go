package retry

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of the retry.waitForReset settings.
const (
	// DefaultMaxWait is the longest reset waited out: a five-hour plan
	// window with room to spare, never a day.
	DefaultMaxWait = 6 * time.Hour
	// DefaultResetMargin is added to a stated reset, since a reset stated
	// to the minute or by a server whose clock runs behind is not lifted
	// at its exact instant.
	DefaultResetMargin = 5 * time.Second
)

// WaitForReset lets a usage limit with a stated reset be waited out when
// nothing is left to switch to (the setting retry.waitForReset): beyond
// MaxDelay, and within it too, so that every such wait is one kind (on
// the wall clock, with the margin, recorded, resumable). The zero value
// is off.
type WaitForReset struct {
	Enabled bool
	// MaxWait is the longest stated reset waited out; a later one fails
	// fast as without the setting. Zero means DefaultMaxWait.
	MaxWait time.Duration
	// Margin is added to the reset before the retry. Zero means
	// DefaultResetMargin; negative means none.
	Margin time.Duration
}

func (w WaitForReset) maxWait() time.Duration {
	if w.MaxWait <= 0 {
		return DefaultMaxWait
	}
	return w.MaxWait
}

func (w WaitForReset) margin() time.Duration {
	switch {
	case w.Margin < 0:
		return 0
	case w.Margin == 0:
		return DefaultResetMargin
	}
	return w.Margin
}

// resetWait is the decision to wait out a usage limit's stated reset, or
// ok false when the policy does not wait for this one: the setting is
// off, the failure is no usage limit or states no reset (nor did an
// earlier one, Attempt.Learned), the reset is further away than MaxWait,
// or the chain already waited for a reset once (a limit right after it
// backs off as a transient error would).
//
// A learned reset is the one honest inference rally makes for a limit
// that states none: the provider itself named that reset for this
// credential on an earlier limit, and it has not come yet. No period is
// extrapolated from past resets, since plan windows start at the first
// request after a reset, not on a fixed grid.
func (p Policy) resetWait(a Attempt) (d Decision, ok bool) {
	w := p.WaitForReset
	in, learned := a.Hint, ""
	if in <= 0 && a.Learned > 0 {
		in, learned = a.Learned, ", "+LearnedReset
	}
	if !w.Enabled || a.Class != UsageLimit || in <= 0 || a.AfterReset || in > w.maxWait() {
		return Decision{}, false
	}
	delay := in + w.margin()
	reason := fmt.Sprintf("usage limit: waiting for the reset in %s%s (retry %d/%d)", Roughly(in), learned, a.N, p.MaxRetries)
	if !a.Now.IsZero() {
		reason = fmt.Sprintf("usage limit: waiting for the reset at %s (in %s%s, retry %d/%d)",
			WallClock(a.Now, a.Now.Add(in)), Roughly(in), learned, a.N, p.MaxRetries)
	}
	return Decision{Action: Retry, Delay: delay, Reason: reason, ResetWait: true}, true
}

// LearnedReset is how every face says that a wait's reset time was
// learned from an earlier limit (Attempt.Learned), not stated by this one:
// the policy's reason carries it (RPC's retry_waiting), print mode's line
// repeats it.
const LearnedReset = "as an earlier limit stated"

// IsLearned reports whether reason, a Decision's Reason, waits for a reset
// learned from an earlier limit.
func IsLearned(reason string) bool { return strings.Contains(reason, LearnedReset) }

// afterReset drops the hint of a usage limit right after a waited-out
// reset when it is above the cap, so the limit backs off within
// maxDelayMs as a transient failure would until the retries run out.
func (p Policy) afterReset(a Attempt) Attempt {
	if a.Class == UsageLimit && a.AfterReset && a.Hint > p.maxDelay() {
		a.Hint = 0
	}
	return a
}
