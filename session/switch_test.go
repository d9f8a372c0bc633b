package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

func TestTooLong(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC)
	tests := []struct {
		name     string
		class    retry.Class
		hint     time.Duration
		switcher bool
		want     string
	}{
		{"usage limit", retry.UsageLimit, 4*time.Hour + 59*time.Minute + 20*time.Second, false, "usage limit: resets at 15:00 (in 4h59m), longer than maxDelayMs 1m0s"},
		{"usage limit, nowhere to switch", retry.UsageLimit, 5 * time.Hour, true, "usage limit: resets at 15:01 (in 5h0m), longer than maxDelayMs 1m0s, and no other credential or fallback model is usable"},
		{"usage limit tomorrow", retry.UsageLimit, 20 * time.Hour, false, "usage limit: resets at Mar 3 06:01 (in 20h0m), longer than maxDelayMs 1m0s"},
		{"transient", retry.Transient, 5 * time.Hour, false, "provider asked for 5h0m0s, longer than maxDelayMs 1m0s; try again at 15:01"},
		{"transient, nowhere to switch", retry.Transient, 90 * time.Second, true, "provider asked for 1m30s, longer than maxDelayMs 1m0s; try again at 10:02, and no fallback model is usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tooLong(tt.class, tt.hint, time.Minute, now, tt.switcher); got != tt.want {
				t.Errorf("tooLong =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

// froms is a Switcher that records which client each failed call used
// and hands out the next target of its list.
type froms struct {
	got     []llm.Provider
	targets []Target
}

func (f *froms) Switch(_ context.Context, from Target, _ error, _ time.Duration) (Target, bool) {
	f.got = append(f.got, from.Provider)
	if len(f.targets) == 0 {
		return Target{}, false
	}
	t := f.targets[0]
	f.targets = f.targets[1:]
	return t, true
}

func usageLimit() error {
	return apiErr(429, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`, "retry-after", "18000")
}

// TestSwitchSeesFailedClient: the Switcher learns the client of the failed call, even
// when SetModel replaced the one it handed out; and when it has nothing
// left, the prompt fails at once naming the reset time.
func TestSwitchSeesFailedClient(t *testing.T) {
	first := &fake{steps: []step{{text: "never called"}}}
	set := &fake{steps: []step{{err: usageLimit()}}}
	second := &fake{steps: []step{{err: usageLimit()}}}
	sw := &froms{targets: []Target{{Provider: second, Model: llm.Model{ID: "m2", Provider: "fake"}, Name: "b"}}}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	s, rec, stop := newSession(t, first, Config{Switcher: sw, Now: func() time.Time { return now }})
	s.SetModel(set, llm.Model{ID: "m", Provider: "fake"})
	err := s.Prompt(t.Context(), "hi", PromptOptions{})
	stop()
	if len(sw.got) != 2 || sw.got[0] != set || sw.got[1] != second {
		t.Errorf("Switch saw %v, want the SetModel client, then the switched-to one", sw.got)
	}
	if first.calls() != 0 || set.calls() != 1 || second.calls() != 1 {
		t.Errorf("calls %d %d %d", first.calls(), set.calls(), second.calls())
	}
	starts := rec.of(AutoRetryStart)
	if len(starts) != 1 || starts[0].DelayMs != 0 || starts[0].SwitchedTo != "b" {
		t.Errorf("auto_retry_start %+v", starts)
	}
	var re *RunError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "usage limit: resets at 15:00 (in 5h0m)") {
		t.Errorf("err %v, want it to name the reset", err)
	}
}
