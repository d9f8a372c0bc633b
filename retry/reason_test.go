package retry

import (
	"testing"
	"time"
)

func TestTooLong(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC)
	tests := []struct {
		name     string
		class    Class
		hint     time.Duration
		switcher bool
		want     string
	}{
		{"usage limit", UsageLimit, 4*time.Hour + 59*time.Minute + 20*time.Second, false, "usage limit: resets at 15:00 (in 4h59m), longer than maxDelayMs 1m0s"},
		{"usage limit, nowhere to switch", UsageLimit, 5 * time.Hour, true, "usage limit: resets at 15:01 (in 5h0m), longer than maxDelayMs 1m0s, and no other credential or fallback model is usable"},
		{"usage limit tomorrow", UsageLimit, 20 * time.Hour, false, "usage limit: resets at Mar 3 06:01 (in 20h0m), longer than maxDelayMs 1m0s"},
		{"transient", Transient, 5 * time.Hour, false, "provider asked for 5h0m0s, longer than maxDelayMs 1m0s; try again at 15:01"},
		{"transient, nowhere to switch", Transient, 90 * time.Second, true, "provider asked for 1m30s, longer than maxDelayMs 1m0s; try again at 10:02, and no fallback model is usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tooLong(tt.class, tt.hint, time.Minute, now, tt.switcher); got != tt.want {
				t.Errorf("tooLong =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

// TestDecideOwnsTheSwitch: Decide says "switch" before anything is
// switched, and Else says what to do when nothing is left; the too-long
// wording names the reset when the caller gives the time.
func TestDecideOwnsTheSwitch(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC)
	tests := []struct {
		name   string
		a      Attempt
		action Action
		orElse Action
		delay  time.Duration
		reason string
	}{
		{"usage limit far away", Attempt{Class: UsageLimit, N: 1, Hint: 5 * time.Hour, CanSwitch: true, Now: now}, Switch, GiveUp, 0,
			"usage limit: resets at 15:01 (in 5h0m), longer than maxDelayMs 1m0s, and no other credential or fallback model is usable"},
		{"usage limit soon", Attempt{Class: UsageLimit, N: 1, Hint: 45 * time.Second, CanSwitch: true, Now: now}, Switch, Retry, 45 * time.Second, "usage_limit: retry 1/3 in 45s"},
		{"usage limit, no hint", Attempt{Class: UsageLimit, N: 2, CanSwitch: true, Now: now}, Switch, Retry, 4 * time.Second, "usage_limit: retry 2/3 in 4s"},
		{"transient hint too long", Attempt{Class: Transient, N: 1, Hint: 90 * time.Second, CanSwitch: true, Now: now}, Switch, GiveUp, 0,
			"provider asked for 1m30s, longer than maxDelayMs 1m0s; try again at 10:02, and no fallback model is usable"},
		{"no switcher, clock", Attempt{Class: UsageLimit, N: 1, Hint: 5 * time.Hour, Now: now}, GiveUp, GiveUp, 0, "usage limit: resets at 15:01 (in 5h0m), longer than maxDelayMs 1m0s"},
		{"exhausted before any switch", Attempt{Class: UsageLimit, N: 4, Hint: 5 * time.Hour, CanSwitch: true}, GiveUp, GiveUp, 0, "gave up after 3 retries"},
		{"transient with a switcher stays", Attempt{Class: Transient, N: 1, CanSwitch: true}, Retry, Retry, 2 * time.Second, "transient: retry 1/3 in 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Default().Decide(tt.a)
			if d.Action != tt.action {
				t.Fatalf("Decide = %+v, want %v", d, tt.action)
			}
			if d.Action == Switch {
				if d.Else == nil || d.Delay != 0 {
					t.Fatalf("Switch %+v without an Else, or with a delay", d)
				}
				d = *d.Else
			} else if d.Else != nil {
				t.Errorf("Else set on %v", d.Action)
			}
			if d.Action != tt.orElse || d.Delay != tt.delay || d.Reason != tt.reason {
				t.Errorf("then %v after %v (%q), want %v after %v (%q)", d.Action, d.Delay, d.Reason, tt.orElse, tt.delay, tt.reason)
			}
		})
	}
	if d := Default().Decide(Attempt{Class: Transient, N: 4}); !d.Exhausted {
		t.Errorf("exhaustion not marked: %+v", d)
	}
	if d := Default().Decide(Attempt{Class: Transient, N: 1, Hint: time.Hour}); d.Exhausted {
		t.Errorf("a too-long wait marked as exhaustion: %+v", d)
	}
	before := Policy{MaxRetries: 3, BeforeOutput: true}
	if d := before.Decide(Attempt{Class: Transient, N: 1, Output: true}); d.Action != GiveUp || d.Reason != "output was already streamed (retry.streaming is beforeOutput)" {
		t.Errorf("beforeOutput after output: %+v", d)
	}
	if d := before.Decide(Attempt{Class: Transient, N: 1}); d.Action != Retry {
		t.Errorf("beforeOutput before output: %+v", d)
	}
}

func TestInspect(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	err := &describer{Failure{Provider: "openai", Status: 429, Body: "Rate limit reached. Please try again in 1.898s."}}
	r := Inspect(err, now)
	f := FailureOf(err)
	v := Classify(f)
	if r.Class != v.Class || r.Reason != v.Reason || r.Hint != Hint(f, now) || r.Message != err.Error() {
		t.Errorf("Inspect = %+v; Classify %+v, Hint %v", r, v, Hint(f, now))
	}
	if r.Class != Transient || r.Hint != 1898*time.Millisecond {
		t.Errorf("Inspect = %+v, want transient with a 1.898s hint", r)
	}
	if (Inspect(nil, now) != Report{}) {
		t.Error("a nil error has a report")
	}
}

type describer struct{ f Failure }

func (d *describer) Error() string         { return "429 " + d.f.Body }
func (d *describer) RetryFailure() Failure { return d.f }
