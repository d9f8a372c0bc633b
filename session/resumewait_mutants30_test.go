package session

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/session/journal"
)

// TestResumedWaitCounts: a wait for a reset resumed from the session file
// counts as the retry it is (State's Retries is 1 while it waits), and
// cancelled it ends the prompt with a RunError that made no retries yet.
// Mutants caught (resumewait.go:48 and :66, alive in this round's diff
// run): the count decremented, and the error's retries counted up.
func TestResumedWaitCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := interruptedFile(t)
		w, _ := journal.InterruptedWait(path)
		j, ld, err := journal.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		s, _, stop := newSession(t, &fake{}, Config{Retry: waitPolicy, Store: j, Resume: ld})
		defer stop()
		run, err := s.StartResumeWait(context.Background(), *w)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := s.State().Retries; n != 1 {
			t.Errorf("Retries %d during the resumed wait, want 1", n)
		}
		s.AbortRetry()
		var re *RunError
		if err := run.Wait(); !errors.As(err, &re) || !errors.Is(err, ErrRetryCancelled) || re.Retries != 0 {
			t.Errorf("err %v (%+v), want a RunError of 0 retries, cancelled", err, re)
		}
	})
}

// TestEachPromptWaitsForItsReset: a chain waits for a usage limit's reset
// once (a limit right after that reset backs off), but a new prompt is a
// new chain: its limit is waited out to its own reset too. Mutant caught
// (run.go:22, alive in this round's diff run): the chain's "waited for a
// reset" flag kept into the next prompt, so the second limit backed off
// and gave up instead of waiting.
func TestEachPromptWaitsForItsReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: planLimit("60")}, {text: "one"}, {err: planLimit("60")}, {text: "two"}}}
		s, rec, stop := newSession(t, f, Config{Retry: waitPolicy, Now: time.Now})
		for _, p := range []string{"first", "second"} {
			run, err := s.Start(context.Background(), p, PromptOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Wait(); err != nil {
				t.Fatalf("%s prompt: %v", p, err)
			}
		}
		stop()
		starts := of[AutoRetryStartEvent](rec)
		if want := (60*time.Second + 30*time.Second).Milliseconds(); len(starts) != 2 || starts[0].DelayMs != want || starts[1].DelayMs != want {
			t.Errorf("auto_retry_start %+v, want two waits of %d ms, one for each prompt", starts, want)
		}
	})
}
