package session

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestResetWaitJumpThreshold: during a wait for a reset, a wall clock
// moved by more than clockJump either way is logged, and one moved by
// exactly clockJump is not. Mutants caught (resetwait.go:53, alive in this
// round's diff run): the jump computed as the wall clock's step plus the
// monotonic one (a clock set back by a little more than clockJump, between
// two one-second checks, read as under it), and either bound made
// inclusive.
func TestResetWaitJumpThreshold(t *testing.T) {
	tests := []struct {
		name   string
		jump   time.Duration
		logged bool
	}{
		{"back by exactly clockJump", -clockJump, false},
		{"forward by exactly clockJump", clockJump, false},
		{"back by a second more", -clockJump - time.Second, true},
		{"forward by a second more", clockJump + time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var offset atomic.Int64
				wall := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
				logs := &proctest.Buffer{}
				f := &fake{steps: []step{{err: planLimit("60")}, {text: "back"}}}
				s, _, stop := newSession(t, f, Config{Retry: waitPolicy, Now: wall, Log: slog.New(slog.NewTextHandler(logs, nil))})
				run, err := s.Start(context.Background(), "hi", PromptOptions{})
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				// Between two of the wait's one-second checks.
				time.Sleep(10*time.Second + checkInterval/2)
				offset.Store(int64(tt.jump))
				if err := run.Wait(); err != nil {
					t.Fatal(err)
				}
				stop()
				if got := strings.Contains(logs.String(), "wall clock jumped"); got != tt.logged {
					t.Errorf("logged a jump %v, want %v:\n%s", got, tt.logged, logs.String())
				}
			})
		})
	}
}

// TestResetWaitPhaseFollowsTheClock: a wall clock set back during a wait
// for a reset moves the phase's Until back with it (the retry still comes
// at the same real moment, and State says when on the clock now shown);
// heartbeats come exactly every HeartbeatInterval. Mutants caught
// (resetwait.go:61, :65): the phase's Until never updated after the
// announcement, and a beat due at exactly the interval put off to the
// next one-second check (beats drifting a second later each time).
func TestResetWaitPhaseFollowsTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var offset atomic.Int64
		start := time.Now()
		wall := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		f := &fake{steps: []step{{err: planLimit("3600")}, {text: "back"}}}
		s, rec, stop := newSession(t, f, Config{Retry: waitPolicy, Now: wall})
		run, err := s.Start(context.Background(), "hi", PromptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		const reset = time.Hour + 30*time.Second
		synctest.Wait()
		time.Sleep(10*time.Minute + checkInterval/2)
		offset.Store(int64(-time.Hour))
		time.Sleep(checkInterval)
		synctest.Wait()
		if got, want := s.State().Phase.Until, start.Add(reset-time.Hour); !got.Equal(want) {
			t.Errorf("phase until %v after the clock went back an hour, want %v", got, want)
		}
		if err := run.Wait(); err != nil {
			t.Fatal(err)
		}
		stop()
		beats := of[RetryHeartbeatEvent](rec)
		if len(beats) < 10 {
			t.Fatalf("%d heartbeats in an hour's wait", len(beats))
		}
		for i := 1; i < 10; i++ {
			if d := beats[i-1].RemainingMs - beats[i].RemainingMs; d != HeartbeatInterval.Milliseconds() {
				t.Fatalf("heartbeat %d came %d ms after the one before, want %d", i, d, HeartbeatInterval.Milliseconds())
			}
		}
	})
}
