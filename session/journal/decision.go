package journal

import (
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Decision is what the session decided about a failed model call, written
// beside the message as "decision" (a key pi's readers do not know and
// skip), so that a viewer draws what happened instead of replaying today's
// settings: the retry it led to, its wait, why, what it switched to, and,
// on the entry that ends a retry chain, how the chain ended. The
// successful answer after retries carries {attempt, end: "succeeded"}.
type Decision struct {
	// Attempt is the retry this failure led to (1-based); on the entry
	// that ends a chain, the retries the chain made.
	Attempt int `json:"attempt,omitempty"`
	// DelayMs is the wait before the retry (0 after a switch).
	DelayMs int64 `json:"delayMs,omitempty"`
	// Class is the failure's class as retry.Class names it (transient,
	// usage_limit, context_overflow, fatal); "" for an abort.
	Class string `json:"class,omitempty"`
	// Reason is the policy's reason ("gave up after 3 retries").
	Reason string `json:"reason,omitempty"`
	// SwitchedTo names the credential or model switched to, if any.
	SwitchedTo string `json:"switchedTo,omitempty"`
	// End says how the retry chain (or the call, outside a chain) ended
	// at this entry; "" while it goes on.
	End End `json:"end,omitempty"`
	// Estimated marks a decision Load worked out for a file that did not
	// record it (older rally, or pi): the class from the stored error
	// text, the wait from the library's default policy. Never written.
	Estimated bool `json:"-"`
}

// End is how a retry chain ended.
type End string

// The ends of a chain.
const (
	// EndSucceeded: the call after the retries answered.
	EndSucceeded End = "succeeded"
	// EndExhausted: every retry the policy allows was made.
	EndExhausted End = "exhausted"
	// EndCancelled: the user aborted the call or the wait.
	EndCancelled End = "cancelled"
	// EndCompaction: the failure was a context overflow, handed to
	// compaction (never retried); the run went on after it.
	EndCompaction End = "compaction"
	// EndFailed: given up for another reason (a fatal error, a wait too
	// long, retry off, an overflow compaction could not fix).
	EndFailed End = "failed"
	// EndResumed: the message's stream dropped and was continued where it
	// stopped (retry.streaming "resume"); the entry is the whole message,
	// recorded once.
	EndResumed End = "resumed"
)

// EstimateDecisions fills in, for a viewer, the decisions the file did not
// record (an older rally's, or pi's) for its failed and aborted calls and
// the answers that ended retry chains, marked as estimated (see
// Decision.Estimated). A chain is counted as rally counts it: it starts
// again at every user message and ends at the first answer that did not
// fail. Resuming needs none of it, so Load leaves it to the viewer.
func (ld *Loaded) EstimateDecisions() {
	var est DecisionEstimator
	for i := range ld.Entries {
		est.Next(&ld.Entries[i])
	}
}

// DecisionEstimator is EstimateDecisions one entry at a time, for a viewer
// that reads a file entry by entry (Scan). The zero value starts at the
// top of a file; a copy taken between two entries goes on from there.
type DecisionEstimator struct {
	attempt int // retries so far in the current chain
}

// Next fills in e's decision, if the file did not record it and e is a
// failed or aborted call or the answer ending a retry chain.
func (est *DecisionEstimator) Next(e *Entry) {
	m := e.Message
	if e.Type != "message" || m == nil {
		return
	}
	if m.Role == llm.User {
		est.attempt = 0
	}
	if m.Role != llm.Assistant {
		return
	}
	if d := e.Decision(); d != nil {
		est.attempt = max(est.attempt, d.Attempt)
		if d.End != "" {
			est.attempt = 0
		}
		return
	}
	switch m.StopReason {
	case llm.Error:
	case llm.Aborted:
		e.setDecision(&Decision{Attempt: est.attempt, End: EndCancelled, Estimated: true})
		est.attempt = 0
		return
	default:
		if est.attempt > 0 {
			e.setDecision(&Decision{Attempt: est.attempt, End: EndSucceeded, Estimated: true})
		}
		est.attempt = 0
		return
	}
	f := retry.Failure{Provider: m.Provider, Body: m.ErrorMessage}
	class := retry.Classify(f).Class
	d := &Decision{Class: class.String(), Estimated: true}
	switch {
	case !e.Retried:
		d.Attempt, d.End = est.attempt, EndFailed
		est.attempt = 0
	case class == retry.ContextOverflow:
		d.Attempt, d.End = est.attempt, EndCompaction
		est.attempt = 0
	default:
		if !class.Retryable() {
			// Retried, so rally saw it as transient: the stored text
			// lost what told it so (an idle timeout's Go error type).
			class = retry.Transient
			d.Class = class.String()
		}
		est.attempt++
		d.Attempt = est.attempt
		d.DelayMs = estimateDelay(class, est.attempt, f, unixTime(m.Timestamp)).Milliseconds()
	}
	e.setDecision(d)
}

func (e *Entry) setDecision(d *Decision) {
	if e.details == nil {
		e.details = &Details{}
	}
	e.details.Decision = d
}

// estimateDelay is the longest wait the default policy makes before retry
// n (jitter at its top): a wait that happened must not disappear.
func estimateDelay(class retry.Class, n int, f retry.Failure, at time.Time) time.Duration {
	pol := retry.Default()
	pol.MaxRetries = max(pol.MaxRetries, n)
	pol.Rand = func() float64 { return 1 }
	return pol.Decide(retry.Attempt{Class: class, N: n, Hint: retry.Hint(f, at)}).Delay
}

func unixTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
