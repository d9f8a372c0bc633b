package session

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/session/journal"
)

// TestLifecycle: Start accepts at once and refuses a second operation;
// Accepted runs after the previous run's agent_settled and before the new
// run's first event; Idle and Run.Done close when the run has settled.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "one", block: true}, {text: "two"}}}
		s, rec, stop := newSession(t, f, Config{})
		select {
		case <-s.Idle():
		default:
			t.Fatal("a fresh session is not idle")
		}
		var seen []int // events recorded when each Accepted ran
		accepted := func() {
			synctest.Wait() // let the subscriber catch up, as a Sync would
			seen = append(seen, len(rec.types()))
		}
		run, err := s.Start(context.Background(), "first", PromptOptions{Accepted: accepted})
		if err != nil {
			t.Fatal(err)
		}
		if !s.State().Streaming {
			t.Errorf("state right after Start: %+v", s.State())
		}
		if _, err := s.Start(context.Background(), "second", PromptOptions{}); !errors.Is(err, ErrBusy) {
			t.Errorf("second Start: %v, want ErrBusy", err)
		}
		if _, err := s.Compact(context.Background()); !errors.Is(err, ErrBusy) {
			t.Errorf("Compact during a prompt: %v, want ErrBusy", err)
		}
		idle := s.Idle()
		synctest.Wait()
		select {
		case <-run.Done():
			t.Fatal("the run settled while its stream was still open")
		case <-idle:
			t.Fatal("idle while a run is going")
		default:
		}
		s.Abort()
		<-idle
		if err := run.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("aborted run's Err %v", err)
		}
		synctest.Wait()
		settledAt := len(of[AgentSettledEvent](rec))
		run2, err := s.Start(context.Background(), "again", PromptOptions{Accepted: accepted})
		if err != nil {
			t.Fatal(err)
		}
		if err := run2.Wait(); err != nil {
			t.Fatal(err)
		}
		stop()
		types := rec.types()
		if settledAt != 1 || seen[0] != 0 || types[seen[1]-1] != string(AgentSettled) || types[seen[1]] != string(AgentStart) {
			t.Errorf("Accepted saw %v events of %v", seen, types)
		}
	})
}

// TestCompactLifecycle: an explicit compaction holds the session like a
// prompt does (ErrCompacting), and Run.Compaction has its result.
func TestCompactLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "summary", block: true}}}
		s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
		defer stop()
		run, err := s.StartCompact(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st := s.State(); !st.Compacting || st.Streaming {
			t.Errorf("state during compaction %+v", st)
		}
		if _, err := s.Start(context.Background(), "hi", PromptOptions{}); !errors.Is(err, ErrCompacting) {
			t.Errorf("Start during compaction: %v, want ErrCompacting", err)
		}
		s.Abort()
		if err := run.Wait(); !errors.Is(err, context.Canceled) || run.Compaction() != nil {
			t.Errorf("aborted compaction: %v %+v", err, run.Compaction())
		}
	})
}

// TestContextErrorsKeepTheirCause (item 8): a deadline is a deadline, an
// abort is a cancellation, whether the run streams, waits to retry or
// compacts.
func TestContextErrorsKeepTheirCause(t *testing.T) {
	for name, st := range map[string]step{
		"streaming":     {text: "partial", block: true},
		"retry waiting": {err: overloaded()},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{steps: []step{st, {text: "never"}}}
				s, _, stop := newSession(t, f, Config{})
				defer stop()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				err := s.Prompt(ctx, "hi", PromptOptions{})
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
					t.Errorf("deadline: %v, want context.DeadlineExceeded", err)
				}
				f2 := &fake{steps: []step{st, {text: "never"}}}
				s2, _, stop2 := newSession(t, f2, Config{})
				defer stop2()
				run, _ := s2.Start(context.Background(), "hi", PromptOptions{})
				synctest.Wait()
				s2.Abort()
				if err := run.Wait(); !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("abort: %v, want context.Canceled", err)
				}
			})
		})
	}
	t.Run("compacting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{steps: []step{{text: "summary", block: true}}}
			s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := s.Compact(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("compaction past its deadline: %v", err)
			}
		})
	})
}

// TestSubscriptionSync: Sync returns once fn has handled every event
// emitted before it, however slow fn is.
func TestSubscriptionSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec, stop := newSession(t, &fake{}, Config{})
		n := 0
		sub := s.Watch(func(Event) { time.Sleep(time.Second); n++ })
		if err := s.Prompt(context.Background(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := sub.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := n
		stop()
		if all := len(rec.types()); want != all || want == 0 {
			t.Errorf("%d events handled at Sync, %d emitted", want, all)
		}
		sub.Close()
		sub.Close() // a second Close does nothing
		if err := sub.Sync(context.Background()); err != nil || n != want {
			t.Errorf("Sync after Close: %v, %d events (want %d)", err, n, want)
		}
	})
}
