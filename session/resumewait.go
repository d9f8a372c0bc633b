package session

import (
	"context"
	"fmt"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// ResumeWait resumes a wait for a usage limit's reset that the session's
// file was stopped in (journal.InterruptedWait): it waits on the wall
// clock until w.Until, as the interrupted wait would have, announced as
// retry w.Attempt (retry_waiting, auto_retry_start with the time left),
// then continues the run from the resumed context, whose last message is
// the prompt that hit the limit. A usage limit right after it backs off
// as one after any waited-out reset. It returns when the run has settled,
// as Continue does; a wait whose time has passed retries at once.
func (s *Session) ResumeWait(ctx context.Context, w journal.Wait) error {
	r, err := s.StartResumeWait(ctx, w)
	if err != nil {
		return err
	}
	return r.Wait()
}

// StartResumeWait is ResumeWait without waiting for the run to settle.
func (s *Session) StartResumeWait(ctx context.Context, w journal.Wait) (*Run, error) {
	runCtx, end, err := s.begin(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	r := &Run{done: make(chan struct{})}
	go func() {
		r.err = s.resumeWait(runCtx, w)
		end(func() { s.hub.emit(AgentSettledEvent{}) })
		close(r.done)
	}()
	return r, nil
}

func (s *Session) resumeWait(ctx context.Context, w journal.Wait) error {
	pol := s.policy(s.model().Provider)
	n := max(w.Attempt, 1)
	left := max(0, w.Until.Sub(s.wall()))
	s.mu.Lock()
	s.attempt, s.resetWaited = n, true
	s.retries++
	s.waiting = &retryWait{attempt: n, max: pol.MaxRetries, until: w.Until, reason: w.Reason}
	s.mu.Unlock()
	reason := fmt.Sprintf("usage limit: resuming the interrupted wait for the reset (retry %d/%d)", n, pol.MaxRetries)
	s.hub.emit(RetryWaitingEvent{Attempt: n, DelayMs: left.Milliseconds(), UntilMs: w.Until.UnixMilli(), Reason: reason})
	// Recorded again: stopped again, it resumes again.
	s.recordWait(journal.Wait{Attempt: n, MaxAttempts: pol.MaxRetries, Until: w.Until, Reason: w.Reason})
	s.hub.emit(AutoRetryStartEvent{Attempt: n, MaxAttempts: pol.MaxRetries, DelayMs: left.Milliseconds(),
		ErrorMessage: w.Reason, ErrorClass: retry.UsageLimit})
	s.logger().Warn("retry decision", "action", "retry", "attempt", n, "maxAttempts", pol.MaxRetries, "delay", left, "reason", reason)
	ok := s.wait(ctx, left, true, n)
	s.endWait()
	if !ok {
		s.recordWait(journal.Wait{Attempt: n, MaxAttempts: pol.MaxRetries, Until: w.Until, Reason: w.Reason, End: journal.EndCancelled})
		s.closeChain(n, RetryCancelled)
		if ctx.Err() != nil {
			return stopped(ctx, "prompt")
		}
		return &RunError{Class: retry.UsageLimit, Retries: n - 1, Err: ErrRetryCancelled}
	}
	return s.run(ctx, nil)
}
