package retry

import (
	"strings"
	"testing"
	"time"
)

// TestDecideLearnedReset: a usage limit that states no reset is waited out
// to the reset an earlier limit of the credential stated (Attempt.Learned)
// under WaitForReset, and only then; a stated reset wins over it.
func TestDecideLearnedReset(t *testing.T) {
	on := Default()
	on.WaitForReset = WaitForReset{Enabled: true, MaxWait: 6 * time.Hour, Margin: 30 * time.Second}
	now := time.Date(2026, 12, 2, 12, 47, 0, 0, time.UTC)
	checkDecisions(t, []decideCase{
		{"learned reset waited out", on, Attempt{Class: UsageLimit, N: 1, Learned: 2*time.Hour + 13*time.Minute, Now: now}, Retry, 2*time.Hour + 13*time.Minute + 30*time.Second, true, "waiting for the reset at 15:00 (in 2h13m, as an earlier limit stated, retry 1/3)"},
		{"learned reset without a clock", on, Attempt{Class: UsageLimit, N: 1, Learned: time.Hour}, Retry, time.Hour + 30*time.Second, true, "reset in 1h0m, as an earlier limit stated (retry 1/3)"},
		{"a stated reset wins", on, Attempt{Class: UsageLimit, N: 1, Hint: time.Hour, Learned: 3 * time.Hour, Now: now}, Retry, time.Hour + 30*time.Second, true, "at 13:47 (in 1h0m, retry 1/3)"},
		{"learned beyond maxWait backs off", on, Attempt{Class: UsageLimit, N: 1, Learned: 7 * time.Hour}, Retry, 2 * time.Second, false, "retry 1/3 in 2s"},
		{"off, learned is not waited for", Default(), Attempt{Class: UsageLimit, N: 1, Learned: time.Hour}, Retry, 2 * time.Second, false, "retry 1/3 in 2s"},
		{"after a waited-out reset backs off", on, Attempt{Class: UsageLimit, N: 2, Learned: time.Hour, AfterReset: true}, Retry, 4 * time.Second, false, "retry 2/3 in 4s"},
		{"a transient failure ignores it", on, Attempt{Class: Transient, N: 1, Learned: time.Hour}, Retry, 2 * time.Second, false, "retry 1/3 in 2s"},
		{"switch first, then the learned reset", on, Attempt{Class: UsageLimit, N: 1, Learned: time.Hour, CanSwitch: true}, Switch, 0, false, "switching"},
	})
}

// decideCase is one row of a table of Decide's answers.
type decideCase struct {
	name       string
	p          Policy
	a          Attempt
	action     Action
	delay      time.Duration
	reset      bool
	reasonPart string
}

// checkDecisions runs each row's Decide; a Switch must fall back to a
// wait for the reset when there is nowhere to go.
func checkDecisions(t *testing.T, tests []decideCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Decide(tt.a)
			if d.Action == Switch && (d.Else == nil || !d.Else.ResetWait) {
				t.Errorf("a switch with nowhere to go should wait for the reset, Else = %+v", d.Else)
			}
			if d.Action != tt.action || d.Delay != tt.delay || d.ResetWait != tt.reset {
				t.Errorf("Decide = %v after %v reset %v (%q), want %v after %v reset %v", d.Action, d.Delay, d.ResetWait, d.Reason, tt.action, tt.delay, tt.reset)
			}
			if !strings.Contains(d.Reason, tt.reasonPart) {
				t.Errorf("reason %q lacks %q", d.Reason, tt.reasonPart)
			}
		})
	}
}
