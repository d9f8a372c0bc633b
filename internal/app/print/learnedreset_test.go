package print

import (
	"bytes"
	"testing"
	"time"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// TestLearnedResetLine: print mode's line of a wait for a reset says when
// the time was learned from an earlier limit rather than stated by this
// one, in the policy's own words (the reason RPC's retry_waiting carries,
// made here by the real policy), and says nothing of it for a stated reset.
func TestLearnedResetLine(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 2, 12, 47, 0, 0, zone)
	in := 2*time.Hour + 13*time.Minute
	pol := retry.Default()
	pol.WaitForReset = retry.WaitForReset{Enabled: true, MaxWait: 6 * time.Hour}
	tests := []struct {
		name string
		a    retry.Attempt
		want string
	}{
		{"learned", retry.Attempt{Class: retry.UsageLimit, N: 1, Learned: in, Now: now},
			"rally: usage limit: waiting for the reset at 15:00 (in 2h 13m, as an earlier limit stated), then retry 1; Ctrl-C cancels\n"},
		{"stated", retry.Attempt{Class: retry.UsageLimit, N: 1, Hint: in, Now: now},
			"rally: usage limit: waiting for the reset at 15:00 (in 2h 13m), then retry 1; Ctrl-C cancels\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := pol.Decide(tt.a)
			if !d.ResetWait {
				t.Fatalf("decision %+v, want a wait for the reset", d)
			}
			var out, errw bytes.Buffer
			to := NewText(&out, &errw, Options{Now: func() time.Time { return now }})
			to.Event(session.RetryWaitingEvent{Attempt: 1, DelayMs: in.Milliseconds(), UntilMs: now.Add(in).UnixMilli(), Reason: d.Reason})
			if got := errw.String(); got != tt.want {
				t.Errorf("stderr\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
