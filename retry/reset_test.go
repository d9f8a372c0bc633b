package retry

import (
	"testing"
	"time"
)

func TestDecideWaitForReset(t *testing.T) {
	on := Default()
	on.WaitForReset = WaitForReset{Enabled: true, MaxWait: 6 * time.Hour, Margin: 30 * time.Second}
	noMargin := on
	noMargin.WaitForReset.Margin = -1
	now := time.Date(2026, 12, 2, 12, 47, 0, 0, time.UTC)
	tests := []decideCase{
		{"off fails fast", Default(), Attempt{Class: UsageLimit, N: 1, Hint: 2 * time.Hour, Now: now}, GiveUp, 0, false, "longer than maxDelayMs"},
		{"stated reset waited out with margin", on, Attempt{Class: UsageLimit, N: 1, Hint: 2*time.Hour + 13*time.Minute, Now: now}, Retry, 2*time.Hour + 13*time.Minute + 30*time.Second, true, "waiting for the reset at 15:00 (in 2h13m, retry 1/3)"},
		{"negative margin adds none", noMargin, Attempt{Class: UsageLimit, N: 1, Hint: time.Hour}, Retry, time.Hour, true, "waiting for the reset in 1h"},
		{"default margin", Policy{MaxRetries: 3, WaitForReset: WaitForReset{Enabled: true}}, Attempt{Class: UsageLimit, N: 1, Hint: time.Hour}, Retry, time.Hour + DefaultResetMargin, true, ""},
		{"beyond maxWait fails fast", on, Attempt{Class: UsageLimit, N: 1, Hint: 7 * time.Hour, Now: now}, GiveUp, 0, false, "resets at 19:47"},
		{"default maxWait", Policy{MaxRetries: 3, WaitForReset: WaitForReset{Enabled: true}}, Attempt{Class: UsageLimit, N: 1, Hint: DefaultMaxWait + time.Second}, GiveUp, 0, false, ""},
		{"no stated reset backs off within maxDelay", on, Attempt{Class: UsageLimit, N: 3}, Retry, 8 * time.Second, false, ""},
		{"reset within maxDelay is waited for too", on, Attempt{Class: UsageLimit, N: 1, Hint: 40 * time.Second}, Retry, 70 * time.Second, true, "waiting for the reset in 40s"},
		{"off, reset within maxDelay waits exactly", Default(), Attempt{Class: UsageLimit, N: 1, Hint: 40 * time.Second}, Retry, 40 * time.Second, false, ""},
		{"transient long hint still gives up", on, Attempt{Class: Transient, N: 1, Hint: time.Hour}, GiveUp, 0, false, "provider asked for 1h0m0s"},
		{"switch first", on, Attempt{Class: UsageLimit, N: 1, Hint: time.Hour, CanSwitch: true}, Switch, 0, false, "switching"},
		{"second limit after reset backs off", on, Attempt{Class: UsageLimit, N: 2, Hint: 5 * time.Hour, AfterReset: true}, Retry, 4 * time.Second, false, "usage_limit: retry 2/3 in 4s"},
		{"second limit after reset short hint is a minimum", on, Attempt{Class: UsageLimit, N: 2, Hint: 10 * time.Second, AfterReset: true}, Retry, 10 * time.Second, false, ""},
		{"second limit after reset exhausts", on, Attempt{Class: UsageLimit, N: 4, Hint: 5 * time.Hour, AfterReset: true}, GiveUp, 0, false, "gave up after 3 retries"},
		{"disabled retry never waits", Policy{Disabled: true, MaxRetries: 3, WaitForReset: WaitForReset{Enabled: true}}, Attempt{Class: UsageLimit, N: 1, Hint: time.Hour}, GiveUp, 0, false, "disabled"},
	}
	checkDecisions(t, tests)
}
