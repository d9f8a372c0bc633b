package retry

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of the retry settings (README, "Every key"). Default returns a
// Policy carrying them.
const (
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 2 * time.Second
	DefaultMaxDelay   = 60 * time.Second
)

// Policy is the retry budget. It is a plain value; the zero Policy never
// retries (MaxRetries 0), and its zero delays mean the defaults above.
type Policy struct {
	// Disabled stops every retry chain before it starts.
	Disabled bool
	// MaxRetries is the number of retries after the first failure; 0 never
	// retries, exactly as a build without retry.
	MaxRetries int
	// BaseDelay is the backoff base: retry n waits BaseDelay·2^(n-1).
	// Zero means DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps a single wait. A server hint above it means switch or
	// give up, never a silent long sleep. Zero means DefaultMaxDelay.
	MaxDelay time.Duration
	// Jitter, a fraction from 0 to 1, adds a random 0..Jitter·delay on top of
	// the delay. It never shortens a server's minimum. Zero adds nothing.
	Jitter float64
	// Rand returns a number in [0, 1) for jitter. Nil uses math/rand/v2.
	Rand func() float64
	// BeforeOutput retries a call only if it failed before streaming
	// anything visible (the retry.streaming setting "beforeOutput", for
	// sinks that cannot take text back). False retries a stream that failed
	// mid-way too ("restart").
	BeforeOutput bool
	// Resume continues a stream that dropped mid-way from where it stopped
	// when its provider can (the retry.streaming setting "resume"); a
	// stream that cannot be continued is retried as with restart. The
	// continuation is one more attempt of the same budget.
	Resume bool
	// WaitForReset waits out a usage limit's stated reset beyond MaxDelay
	// when nothing is left to switch to; the zero value never does.
	WaitForReset WaitForReset
}

// Default returns the default policy: 3 retries, 2 s base, 60 s cap,
// no jitter, no waiting for a reset (its limits at their defaults).
func Default() Policy {
	return Policy{MaxRetries: DefaultMaxRetries, BaseDelay: DefaultBaseDelay, MaxDelay: DefaultMaxDelay,
		WaitForReset: WaitForReset{MaxWait: DefaultMaxWait, Margin: DefaultResetMargin}}
}

// For returns p whatever the provider: the per-provider policy of a
// caller that has one policy for all (session.Config.Retry: pol.For).
func (p Policy) For(provider string) Policy { return p }

func (p Policy) baseDelay() time.Duration {
	if p.BaseDelay <= 0 {
		return DefaultBaseDelay
	}
	return p.BaseDelay
}

func (p Policy) maxDelay() time.Duration {
	if p.MaxDelay <= 0 {
		return DefaultMaxDelay
	}
	return p.MaxDelay
}

// Backoff returns the exponential delay for retry attempt n (1-based),
// capped at MaxDelay.
func (p Policy) Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d, limit := p.baseDelay(), p.maxDelay()
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Action is what to do about a failure.
type Action int

const (
	// GiveUp ends the chain; Decision.Reason says why.
	GiveUp Action = iota
	// Retry waits Decision.Delay and calls again with the same credential
	// and model.
	Retry
	// Switch moves to another credential or fallback model and calls again
	// after Decision.Delay (normally 0).
	Switch
)

func (a Action) String() string {
	switch a {
	case Retry:
		return "retry"
	case Switch:
		return "switch"
	default:
		return "give up"
	}
}

// Attempt describes the retry being considered.
type Attempt struct {
	Class Class
	// N is the 1-based number of the retry that would be made (the counter
	// after incrementing it).
	N int
	// Hint is the wait the server asked for, or 0.
	Hint time.Duration
	// CanSwitch reports that the caller has a way to move to another
	// credential or fallback model (it has not been tried yet).
	CanSwitch bool
	// Output reports that the failed call had streamed visible output.
	Output bool
	// Now is the current time, to name the wall-clock time of a reset in
	// Reason. The zero Now names only durations.
	Now time.Time
	// AfterReset reports that this chain already waited for a usage
	// limit's reset: a second limit is not waited out again.
	AfterReset bool
	// Learned is how long until the reset that an earlier usage limit of
	// the same credential stated, when that reset is still ahead (the
	// caller reads it from the credential's marks; 0 for none). It stands
	// in for the reset of a usage limit that states none, to wait it out
	// under WaitForReset only: a stated Hint always wins, and without
	// WaitForReset such a limit backs off as before.
	Learned time.Duration
}

// Decision is the policy's answer.
type Decision struct {
	Action Action
	Delay  time.Duration
	// Reason explains the decision in a short lowercase phrase, e.g.
	// "usage limit: resets at 15:00 (in 4h59m), longer than maxDelayMs 1m0s".
	Reason string
	// Exhausted reports a GiveUp because every retry was made.
	Exhausted bool
	// Else is what to do when a Switch finds nothing to switch to: retry
	// on the same credential and model, or give up. Set only for Switch.
	Else *Decision
	// ResetWait reports a Retry that waits out a usage limit's stated
	// reset (Policy.WaitForReset): a long wait, on the wall clock.
	ResetWait bool
}

// Decide applies the policy to one failure. It is pure apart from the
// jitter source. A Switch is decided before anything is switched: the
// caller tries it, and follows Else when there is nowhere to go.
func (p Policy) Decide(a Attempt) Decision {
	switch {
	case a.Class == ContextOverflow:
		return Decision{Action: GiveUp, Reason: "context overflow is compacted, never retried"}
	case a.Class == Fatal:
		return Decision{Action: GiveUp, Reason: "fatal error"}
	case p.Disabled:
		return Decision{Action: GiveUp, Reason: "retry is disabled"}
	case p.BeforeOutput && a.Output:
		return Decision{Action: GiveUp, Reason: "output was already streamed (retry.streaming is beforeOutput)"}
	case a.N > p.MaxRetries:
		return Decision{Action: GiveUp, Reason: fmt.Sprintf("gave up after %d retries", p.MaxRetries), Exhausted: true}
	}
	limit := p.maxDelay()
	if a.CanSwitch && (a.Class == UsageLimit || a.Hint > limit) {
		stay := p.stay(a, limit, true)
		if a.Class == UsageLimit {
			return Decision{Action: Switch, Reason: "usage limit: switching credential or model", Else: &stay}
		}
		return Decision{Action: Switch, Reason: fmt.Sprintf("provider asked for %v, longer than maxDelayMs %v: switching", a.Hint, limit), Else: &stay}
	}
	return p.stay(a, limit, false)
}

// stay decides without switching; switchFailed says a switch was wanted
// and found nothing, for the wording.
func (p Policy) stay(a Attempt, limit time.Duration, switchFailed bool) Decision {
	if d, ok := p.resetWait(a); ok {
		return d
	}
	a = p.afterReset(a)
	if a.Hint > limit {
		return Decision{Action: GiveUp, Reason: tooLong(a.Class, a.Hint, limit, a.Now, switchFailed)}
	}
	var d time.Duration
	switch {
	case a.Class == UsageLimit && a.Hint > 0 && !a.AfterReset:
		// A stated reset within the cap: wait exactly for it.
		d = a.Hint
	default:
		// Transient, or a usage limit with no stated reset (it may be short):
		// back off, but never less than the server's minimum.
		d = max(p.Backoff(a.N), a.Hint)
	}
	d = p.jitter(d, limit, a.Hint)
	return Decision{Action: Retry, Delay: d, Reason: fmt.Sprintf("%v: retry %d/%d in %v", a.Class, a.N, p.MaxRetries, d)}
}

// jitter adds up to Jitter·d at random, capped at limit but never below the
// server's hint.
func (p Policy) jitter(d, limit, hint time.Duration) time.Duration {
	j := min(max(p.Jitter, 0), 1)
	if j == 0 {
		return d
	}
	r := p.Rand
	if r == nil {
		r = rand.Float64
	}
	d += time.Duration(j * r() * float64(d))
	return max(min(d, limit), hint)
}
