package session

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// planLimit is a plan's usage limit whose reset is in secs seconds.
func planLimit(secs string) error {
	return apiErr(429, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`, "retry-after", secs)
}

// waitPolicy waits for resets up to 6 hours, with a 30 s margin.
func waitPolicy(string) retry.Policy {
	p := retry.Default()
	p.WaitForReset = retry.WaitForReset{Enabled: true, MaxWait: 6 * time.Hour, Margin: 30 * time.Second}
	return p
}

// TestResetWaitWallClock drives a two-hour wait for a reset on a wall
// clock the test moves: the retry comes when the wall clock reaches the
// reset plus the margin, whichever way it got there.
func TestResetWaitWallClock(t *testing.T) {
	const reset = 2*time.Hour + 30*time.Second // the stated 2 h and the margin
	tests := []struct {
		name string
		// jump moves the wall clock this far 10 minutes into the wait.
		jump time.Duration
		// retryAt is when, on the test's (monotonic) clock, the retry goes out.
		retryAt time.Duration
		logged  string
	}{
		{"deadline", 0, reset, ""},
		{"suspend jumps the clock forward", 90 * time.Minute, reset - 90*time.Minute, "wall clock jumped"},
		{"clock set back", -time.Hour, reset, "wall clock jumped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var offset atomic.Int64
				start := time.Now()
				wall := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
				logs := &proctest.Buffer{}
				f := &fake{steps: []step{{err: planLimit("7200")}, {text: "back"}}}
				s, rec, stop := newSession(t, f, Config{Retry: waitPolicy, Now: wall, Log: slog.New(slog.NewTextHandler(logs, nil))})
				run, err := s.Start(context.Background(), "hi", PromptOptions{})
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				ph := s.State().Phase
				if ph.Kind != PhaseRetryWait || !ph.Until.Equal(start.Add(reset)) {
					t.Fatalf("phase %+v, want a retry wait until %v", ph, start.Add(reset))
				}
				time.Sleep(10 * time.Minute)
				offset.Store(int64(tt.jump))
				time.Sleep(tt.retryAt - 10*time.Minute - time.Second)
				synctest.Wait()
				if n := f.calls(); n != 1 {
					t.Fatalf("%d calls a second before the retry is due, want 1", n)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if n := f.calls(); n != 2 {
					t.Fatalf("%d calls when the retry is due, want 2", n)
				}
				if err := run.Wait(); err != nil {
					t.Fatal(err)
				}
				stop()
				starts := of[AutoRetryStartEvent](rec)
				waits := of[RetryWaitingEvent](rec)
				if len(starts) != 1 || starts[0].DelayMs != reset.Milliseconds() || len(waits) != 1 || waits[0].UntilMs != start.Add(reset).UnixMilli() {
					t.Errorf("auto_retry_start %+v, retry_waiting %+v, want one of each for %v", starts, waits, reset)
				}
				beats := of[RetryHeartbeatEvent](rec)
				if len(beats) == 0 || beats[0].RemainingMs != reset.Milliseconds() {
					t.Fatalf("heartbeats %v, want the first with the whole wait", beats)
				}
				for i := 1; i < len(beats); i++ {
					if beats[i].RemainingMs >= beats[i-1].RemainingMs && tt.jump >= 0 {
						t.Fatalf("heartbeat %d says %d ms left after %d ms", i, beats[i].RemainingMs, beats[i-1].RemainingMs)
					}
				}
				if want := int(tt.retryAt / HeartbeatInterval); len(beats) < want-1 || len(beats) > want+1 {
					t.Errorf("%d heartbeats over %v, want about %d", len(beats), tt.retryAt, want)
				}
				if got := logs.String(); tt.logged != "" && !strings.Contains(got, tt.logged) || tt.logged == "" && strings.Contains(got, "jumped") {
					t.Errorf("log %q, want it to say %q", got, tt.logged)
				}
			})
		})
	}
}

// TestResetWaitCancel ends a long wait for a reset at once, by AbortRetry,
// Abort, turning auto-retry off and the prompt's context.
func TestResetWaitCancel(t *testing.T) {
	tests := []struct {
		name   string
		cancel func(s *Session, stop context.CancelFunc)
		want   error
	}{
		{"abort_retry", func(s *Session, _ context.CancelFunc) { s.AbortRetry() }, ErrRetryCancelled},
		{"abort", func(s *Session, _ context.CancelFunc) { s.Abort() }, context.Canceled},
		{"auto-retry off", func(s *Session, _ context.CancelFunc) { s.SetAutoRetryEnabled(false) }, ErrRetryCancelled},
		{"context", func(_ *Session, stop context.CancelFunc) { stop() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{steps: []step{{err: planLimit("7200")}}}
				s, rec, stop := newSession(t, f, Config{Retry: waitPolicy})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				run, err := s.Start(ctx, "hi", PromptOptions{})
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Hour)
				began := time.Now()
				tt.cancel(s, cancel)
				err = run.Wait()
				if took := time.Since(began); took != 0 {
					t.Errorf("the wait ended %v after the cancel, want at once", took)
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("err %v, want %v", err, tt.want)
				}
				stop()
				ends := of[AutoRetryEndEvent](rec)
				if len(ends) != 1 || ends[0].FinalError != RetryCancelled || f.calls() != 1 {
					t.Errorf("auto_retry_end %+v after %d calls, want one cancelled and no retry", ends, f.calls())
				}
			})
		})
	}
}

// TestResetWaitSecondLimit: a usage limit right after a waited-out reset
// is not waited out again; it backs off as a transient failure (4 s for
// retry 2) until the retries run out.
func TestResetWaitSecondLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: planLimit("7200")}, {err: planLimit("7200")}, {err: planLimit("7200")}, {err: planLimit("7200")}}}
		s, rec, stop := newSession(t, f, Config{Retry: waitPolicy})
		start := time.Now()
		err := s.Prompt(context.Background(), "hi", PromptOptions{})
		var re *RunError
		if !errors.As(err, &re) || !re.Exhausted {
			t.Fatalf("err %v, want the retries exhausted", err)
		}
		// 2 h 30 s for the reset, then backoff of 4 s and 8 s.
		if took, want := time.Since(start), 2*time.Hour+30*time.Second+12*time.Second; took != want {
			t.Errorf("the chain took %v, want %v", took, want)
		}
		stop()
		var delays []int64
		for _, e := range of[AutoRetryStartEvent](rec) {
			delays = append(delays, e.DelayMs)
		}
		if len(delays) != 3 || delays[1] != 4000 || delays[2] != 8000 || len(of[RetryWaitingEvent](rec)) != 1 {
			t.Errorf("delays %v and %d reset waits, want one reset wait then 4000, 8000", delays, len(of[RetryWaitingEvent](rec)))
		}
	})
}

// TestResetWaitJournal: the wait is in the session file while it runs, so
// a rally stopped during it finds it; once it ended it is not.
func TestResetWaitJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := journal.CreateAt(filepath.Join(t.TempDir(), "s.jsonl"), "/w")
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		f := &fake{steps: []step{{err: planLimit("7200")}, {text: "back"}}}
		s, _, stop := newSession(t, f, Config{Retry: waitPolicy, Store: j})
		defer stop()
		start := time.Now()
		run, err := s.Start(context.Background(), "hi", PromptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		w, err := journal.InterruptedWait(j.Path())
		if err != nil || w == nil || w.Attempt != 1 || !w.Until.Equal(start.Add(2*time.Hour+30*time.Second)) {
			t.Fatalf("InterruptedWait = %+v, %v during the wait, want attempt 1 until %v", w, err, start.Add(2*time.Hour+30*time.Second))
		}
		if err := run.Wait(); err != nil {
			t.Fatal(err)
		}
		if w, err := journal.InterruptedWait(j.Path()); w != nil || err != nil {
			t.Errorf("InterruptedWait = %+v, %v after the wait, want none", w, err)
		}
	})
}
