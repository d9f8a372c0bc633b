package session

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// learner is a Switcher with nothing to switch to that knows a reset from
// an earlier limit, as auth's Rotation does from its marks.
type learner struct {
	reset time.Time
	asked atomic.Int32
}

func (l *learner) Switch(context.Context, llm.Target, retry.Report) (llm.Target, bool) {
	return llm.Target{}, false
}

func (l *learner) LearnedReset(context.Context, llm.Target) time.Time {
	l.asked.Add(1)
	return l.reset
}

// TestLearnedResetAskedForSilentLimits: a usage limit that states no
// reset is waited out to the reset an earlier limit stated (the
// Switcher's LearnedReset), plus the margin; a limit that states its own
// reset, a failure that is no usage limit, or any limit while
// retry.waitForReset is off never asks for one.
// Mutants caught (learnedreset.go, found alive by gremlins in this
// round's diff run): the class test negated (a silent usage limit backs
// off instead of waiting for the known reset), and the hint test negated
// or made >= 0 (the same, for a limit with no hint).
func TestLearnedResetAskedForSilentLimits(t *testing.T) {
	const margin = 30 * time.Second
	silent := apiErr(429, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`)
	tests := []struct {
		name      string
		err       error
		wantDelay time.Duration // the first auto_retry_start's delay, 0: not a reset wait
		wantAsked int32
		off       bool // retry.waitForReset off
	}{
		{"silent usage limit", silent, 2*time.Hour + margin, 1, false},
		{"usage limit stating its reset", planLimit("600"), 10*time.Minute + margin, 0, false},
		{"overloaded", apiErr(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), 0, 0, false},
		{"silent usage limit, waitForReset off", silent, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &learner{reset: time.Now().Add(2 * time.Hour)}
				f := &fake{steps: []step{{err: tt.err}, {text: "back"}}}
				pol := waitPolicy
				if tt.off {
					pol = func(string) retry.Policy { return retry.Default() }
				}
				s, rec, stop := newSession(t, f, Config{Retry: pol, Switcher: l, Now: time.Now})
				run, err := s.Start(context.Background(), "hi", PromptOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := run.Wait(); err != nil {
					t.Fatal(err)
				}
				stop()
				starts := of[AutoRetryStartEvent](rec)
				if len(starts) != 1 {
					t.Fatalf("auto_retry_start %+v, want one", starts)
				}
				got := time.Duration(starts[0].DelayMs) * time.Millisecond
				if tt.wantDelay > 0 && got != tt.wantDelay || tt.wantDelay == 0 && got >= time.Minute {
					t.Errorf("waited %v (%s), want %v", got, starts[0].ErrorMessage, tt.wantDelay)
				}
				if n := l.asked.Load(); n != tt.wantAsked {
					t.Errorf("LearnedReset asked %d times, want %d", n, tt.wantAsked)
				}
			})
		})
	}
}
