package session

import (
	"context"
	"fmt"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// resume is the agent's Resume hook (retry.streaming "resume"): a stream
// broke but its provider can continue it (d). It runs on the run's
// goroutine between two of the stream's events, so what it emits is in
// order with the message's updates.
//
// The wait is a retry like any other, for pi clients: the same budget,
// the same policy, an auto_retry_start / auto_retry_end pair around it
// (with errorClass "transient" and resume naming how), AbortRetry and
// Abort cancel it. What differs is after the wait: the stream reconnects
// and the same message goes on (stream_resumed), so there is no
// agent_end, no message_end with an error and no message_discarded in
// the middle, and nothing is generated twice. When the policy says no
// (not transient, out of retries, cancelled) or the provider cannot
// continue after all (the stored response is gone), it returns false: the
// stream fails with the drop's error and the ordinary retry path decides,
// restarting the call as retry.streaming "restart" does.
func (r *runState) resume(ctx context.Context, d *llm.Drop) bool {
	s := r.s
	pol := s.policy(r.used.Model.Provider)
	if !pol.Resume {
		return false
	}
	cause := d.Err
	for {
		rep := s.inspect(ctx, cause)
		s.mu.Lock()
		n, cancelled := s.attempt+1, s.noRetry
		s.mu.Unlock()
		if ctx.Err() != nil || cancelled || rep.Class != retry.Transient {
			return false
		}
		dec := pol.Decide(retry.Attempt{Class: rep.Class, N: n, Hint: rep.Hint, Now: s.now()})
		if dec.Action != retry.Retry {
			return false
		}
		msg := cause.Error()
		s.logger().Warn("resume decision", "attempt", n, "maxAttempts", pol.MaxRetries, "delay", dec.Delay,
			"provider", r.used.Model.Provider, "model", r.used.Model.ID, "method", d.Method, "cursor", d.Cursor, "error", msg)
		s.mu.Lock()
		s.attempt = n
		s.retries++
		s.waiting = &retryWait{attempt: n, max: pol.MaxRetries, until: time.Now().Add(dec.Delay), reason: msg}
		s.mu.Unlock()
		s.hub.emit(AutoRetryStartEvent{Attempt: n, MaxAttempts: pol.MaxRetries, DelayMs: dec.Delay.Milliseconds(),
			ErrorMessage: msg, ErrorClass: rep.Class, Resume: d.Method})
		ok := s.wait(ctx, dec.Delay, false, n)
		s.endWait()
		if !ok {
			// Cancelled: the stream fails with the drop, and the retry
			// path ends the chain as "Retry cancelled".
			return false
		}
		err := d.Reconnect(ctx)
		if err == nil {
			r.resumed = &journal.Decision{Attempt: n, DelayMs: dec.Delay.Milliseconds(), Class: rep.Class.String(),
				Reason: resumedHow(d), End: journal.EndResumed}
			s.hub.emit(StreamResumedEvent{Attempt: n, Cursor: d.Cursor, Continuation: d.Method == llm.ResumeContinuation,
				GapMs: time.Since(d.At).Milliseconds()})
			s.mu.Lock()
			s.attempt = 0
			s.mu.Unlock()
			s.hub.emit(AutoRetryEndEvent{Success: true, Attempt: n})
			return true
		}
		if rep := s.inspect(ctx, err); rep.Class != retry.Transient {
			// The provider cannot continue (the response is gone, a bad
			// cursor): restart, counted as the next attempt.
			s.logger().Warn("resume failed, restarting", "error", err.Error())
			return false
		}
		cause = err
	}
}

// resumedHow is the journal's reason for a resumed stream.
func resumedHow(d *llm.Drop) string {
	if d.Method == llm.ResumeCursor {
		return fmt.Sprintf("resumed from cursor %s", d.Cursor)
	}
	return "resumed as a continuation"
}
