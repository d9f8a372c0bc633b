package session

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

// interruptedFile writes a session file as a rally stopped during a wait
// for a reset leaves it: the prompt, then the wait, due in an hour.
func interruptedFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	j, err := journal.CreateAt(path, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("refactor it")}, Timestamp: llm.Now()}, false); err != nil {
		t.Fatal(err)
	}
	if err := j.AppendWait(journal.Wait{Attempt: 1, MaxAttempts: 3, Until: time.Now().Add(time.Hour).UTC(), Reason: "429 usage limit"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	return path
}

// TestResumeWait: a wait found in a session file resumes for the time
// left, then the interrupted prompt is answered, once.
func TestResumeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := interruptedFile(t)
		w, err := journal.InterruptedWait(path)
		if err != nil || w == nil {
			t.Fatalf("InterruptedWait = %v, %v", w, err)
		}
		j, ld, err := journal.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		f := &fake{steps: []step{{text: "refactored"}}}
		s, rec, stop := newSession(t, f, Config{Retry: waitPolicy, Store: j, Resume: ld})
		start := time.Now()
		time.Sleep(20 * time.Minute) // rally was down this long
		run, err := s.StartResumeWait(context.Background(), *w)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if ph := s.State().Phase; ph.Kind != PhaseRetryWait || !ph.Until.Equal(w.Until) {
			t.Errorf("phase %+v, want a retry wait until %v", ph, w.Until)
		}
		if err := run.Wait(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != time.Hour {
			t.Errorf("the call went out %v after the wait began, want 1h", took)
		}
		stop()
		if f.calls() != 1 || f.request(0).Messages[len(f.request(0).Messages)-1].TextOf() != "refactor it" {
			t.Fatalf("%d calls, want one continuing the prompt", f.calls())
		}
		starts, ends := of[AutoRetryStartEvent](rec), of[AutoRetryEndEvent](rec)
		if len(starts) != 1 || starts[0].DelayMs != (40*time.Minute).Milliseconds() || len(ends) != 1 || !ends[0].Success {
			t.Errorf("auto_retry_start %+v, auto_retry_end %+v, want one 40-minute wait that succeeded", starts, ends)
		}
		if w, _ := journal.InterruptedWait(path); w != nil {
			t.Errorf("the file still has an interrupted wait %+v", w)
		}
	})
}

// TestResumeWaitCancelled: a resumed wait cancelled at once is recorded as
// ended, so the next start does not resume it again.
func TestResumeWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := interruptedFile(t)
		w, _ := journal.InterruptedWait(path)
		j, ld, err := journal.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		f := &fake{}
		s, _, stop := newSession(t, f, Config{Retry: waitPolicy, Store: j, Resume: ld})
		defer stop()
		run, err := s.StartResumeWait(context.Background(), *w)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		s.AbortRetry()
		if err := run.Wait(); !errors.Is(err, ErrRetryCancelled) {
			t.Errorf("err %v, want ErrRetryCancelled", err)
		}
		if f.calls() != 0 {
			t.Errorf("%d calls after a cancelled wait", f.calls())
		}
		if w, _ := journal.InterruptedWait(path); w != nil {
			t.Errorf("a cancelled wait is still to resume: %+v", w)
		}
	})
}
