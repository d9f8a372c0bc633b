package retry

import (
	"strings"
	"testing"
	"time"
)

func TestBackoffSequence(t *testing.T) {
	p := Default()
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 10: 60 * time.Second} {
		if got := p.Decide(Attempt{Class: Transient, N: n}).Delay; n <= 3 && got != want {
			t.Errorf("attempt %d: delay %v, want %v", n, got, want)
		}
		if got := p.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	fixed := func(x float64) func() float64 { return func() float64 { return x } }
	tests := []struct {
		name       string
		p          Policy
		a          Attempt
		action     Action
		delay      time.Duration
		reasonPart string
	}{
		{"transient first retry", Default(), Attempt{Class: Transient, N: 1}, Retry, 2 * time.Second, "retry 1/3"},
		{"transient third retry", Default(), Attempt{Class: Transient, N: 3}, Retry, 8 * time.Second, "retry 3/3"},
		{"exhausted", Default(), Attempt{Class: Transient, N: 4}, GiveUp, 0, "gave up after 3 retries"},
		{"hint longer than backoff wins", Default(), Attempt{Class: Transient, N: 1, Hint: 30 * time.Second}, Retry, 30 * time.Second, ""},
		{"hint shorter than backoff loses", Default(), Attempt{Class: Transient, N: 2, Hint: time.Second}, Retry, 4 * time.Second, ""},
		{"hint above cap gives up", Default(), Attempt{Class: Transient, N: 1, Hint: 5 * time.Hour}, GiveUp, 0, "provider asked for 5h0m0s, longer than maxDelayMs 1m0s"},
		{"hint above cap switches", Default(), Attempt{Class: Transient, N: 1, Hint: 5 * time.Hour, CanSwitch: true}, Switch, 0, "switching"},
		{"max retries zero", Policy{}, Attempt{Class: Transient, N: 1}, GiveUp, 0, "gave up after 0 retries"},
		{"disabled", Policy{Disabled: true, MaxRetries: 3}, Attempt{Class: Transient, N: 1}, GiveUp, 0, "disabled"},
		{"fatal", Default(), Attempt{Class: Fatal, N: 1}, GiveUp, 0, "fatal"},
		{"overflow never retried", Default(), Attempt{Class: ContextOverflow, N: 1}, GiveUp, 0, "compacted"},
		{"usage limit switch", Default(), Attempt{Class: UsageLimit, N: 1, Hint: time.Hour, CanSwitch: true}, Switch, 0, "usage limit"},
		{"usage limit near reset waits for it", Default(), Attempt{Class: UsageLimit, N: 1, Hint: 45 * time.Second}, Retry, 45 * time.Second, ""},
		{"usage limit short reset exact", Default(), Attempt{Class: UsageLimit, N: 2, Hint: time.Second}, Retry, time.Second, ""},
		{"usage limit far reset fails fast", Default(), Attempt{Class: UsageLimit, N: 1, Hint: 3 * time.Hour}, GiveUp, 0, "provider asked for 3h0m0s"},
		{"usage limit no hint backs off", Default(), Attempt{Class: UsageLimit, N: 2}, Retry, 4 * time.Second, ""},
		{"custom base", Policy{MaxRetries: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}, Attempt{Class: Transient, N: 5}, Retry, time.Second, ""},
		{"jitter adds", Policy{MaxRetries: 3, Jitter: 0.5, Rand: fixed(0.5)}, Attempt{Class: Transient, N: 1}, Retry, 2500 * time.Millisecond, ""},
		{"jitter capped", Policy{MaxRetries: 9, Jitter: 1, Rand: fixed(0.99)}, Attempt{Class: Transient, N: 6}, Retry, 60 * time.Second, ""},
		{"jitter never shortens hint", Policy{MaxRetries: 3, Jitter: 1, Rand: fixed(0.99)}, Attempt{Class: Transient, N: 1, Hint: 59 * time.Second}, Retry, 60 * time.Second, ""},
		{"jitter at cap keeps hint", Policy{MaxRetries: 3, Jitter: 1, Rand: fixed(0.99)}, Attempt{Class: Transient, N: 1, Hint: 60 * time.Second}, Retry, 60 * time.Second, ""},
		{"jitter out of range clamped", Policy{MaxRetries: 3, Jitter: 7, Rand: fixed(0.5)}, Attempt{Class: Transient, N: 1}, Retry, 3 * time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Decide(tt.a)
			if d.Action != tt.action || d.Delay != tt.delay {
				t.Errorf("Decide = %v after %v (%q), want %v after %v", d.Action, d.Delay, d.Reason, tt.action, tt.delay)
			}
			if !strings.Contains(d.Reason, tt.reasonPart) {
				t.Errorf("reason %q does not contain %q", d.Reason, tt.reasonPart)
			}
		})
	}
}

func TestJitterNeverBelowHint(t *testing.T) {
	p := Policy{MaxRetries: 3, Jitter: 1}
	for i := range 1000 {
		hint := time.Duration(i) * 60 * time.Millisecond
		d := p.Decide(Attempt{Class: Transient, N: 1, Hint: hint})
		if d.Delay < hint || d.Delay > 60*time.Second {
			t.Fatalf("hint %v: delay %v out of [hint, cap]", hint, d.Delay)
		}
	}
}

func TestClassText(t *testing.T) {
	for _, c := range []Class{Fatal, Transient, UsageLimit, ContextOverflow} {
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Class
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("round trip %v: got %v, %v", c, back, err)
		}
	}
	var c Class
	if err := c.UnmarshalText([]byte("nope")); err == nil {
		t.Error("unknown class accepted")
	}
}
