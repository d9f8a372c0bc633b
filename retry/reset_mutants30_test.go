package retry

import (
	"testing"
	"time"
)

// The rows below each catch a mutant that lived through the rest of the
// retry tests (issue 30, third round): the reset wait's edges, at exactly
// maxWait and, right after a reset, at exactly maxDelayMs.
func TestDecideWaitForResetEdges(t *testing.T) {
	on := Default()
	on.WaitForReset = WaitForReset{Enabled: true, MaxWait: 6 * time.Hour, Margin: 30 * time.Second}
	checkDecisions(t, []decideCase{
		// reset.go `in > w.maxWait()`: maxWait itself is waited out.
		{"reset exactly at maxWait is waited out", on, Attempt{Class: UsageLimit, N: 1, Hint: 6 * time.Hour}, Retry, 6*time.Hour + 30*time.Second, true, "waiting for the reset in 6h"},
		{"reset just past maxWait fails fast", on, Attempt{Class: UsageLimit, N: 1, Hint: 6*time.Hour + time.Second}, GiveUp, 0, false, ""},
		// reset.go afterReset `a.Hint > p.maxDelay()`: a second limit
		// whose reset is exactly the cap waits for it, not a backoff.
		{"second limit after reset at exactly maxDelay waits for it", on, Attempt{Class: UsageLimit, N: 2, Hint: DefaultMaxDelay, AfterReset: true}, Retry, DefaultMaxDelay, false, ""},
	})
}

// TestHintClockAtTheEnd: a reset phrase with nothing or a lone digit after
// it at the end of a message is no time and no panic (hint.go clock,
// `i < len(s)`); an hour has at most two digits (`i < 2`), so "012:30" is
// no clock time.
func TestHintClockAtTheEnd(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ name, body string }{
		{"phrase at the end", "Rate limited. Please try again at"},
		{"one digit at the end", "Your limit resets at 5"},
		{"three-digit hour", "limits will reset at 012:30 UTC"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hint(Failure{Body: tt.body}, at); got != 0 {
				t.Errorf("Hint = %v, want none", got)
			}
		})
	}
}
