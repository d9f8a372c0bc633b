package session

import (
	"context"
	"time"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// A wait for a usage limit's reset (retry.waitForReset) can last hours, so
// it is not one timer: a timer runs on the monotonic clock, which stops
// while a laptop sleeps, and would retry hours after the reset. The wait
// re-reads the wall clock every checkInterval and ends at the earlier of
// its wall-clock deadline (a suspend that jumps the clock forward retries
// on wake) and its planned length on the monotonic clock (a clock set back
// does not stretch it); either jump is logged.
const (
	// HeartbeatInterval is how often retry_heartbeat reports the time left.
	HeartbeatInterval = 10 * time.Second
	checkInterval     = time.Second
	// clockJump is how far the wall clock may drift from the monotonic one
	// between two checks before the wait says the clock jumped.
	clockJump = 5 * time.Second
)

// WaitStore is a Store that records waits for a reset, so a session
// stopped during one can resume it (*journal.Journal is one). A Store
// without it just does not record them.
type WaitStore interface {
	AppendWait(journal.Wait) error
}

// wall is the wall clock, without the monotonic reading that would make
// Sub ignore a jump of the system clock.
func (s *Session) wall() time.Time { return s.now().Round(0) }

// sleepUntilReset waits d on the wall clock unless ctx ends; it reports
// whether the wait ran out. It updates the phase's Until as the wall clock
// moves, and emits a retry_heartbeat every HeartbeatInterval.
func (s *Session) sleepUntilReset(ctx context.Context, d time.Duration, attempt int) bool {
	start := time.Now()
	prev, prevElapsed := s.wall(), time.Duration(0)
	deadline := prev.Add(d)
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	lastBeat := time.Duration(-1)
	for {
		now := s.wall()
		elapsed := time.Since(start)
		left := min(deadline.Sub(now), d-elapsed)
		if jump := now.Sub(prev) - (elapsed - prevElapsed); jump > clockJump || jump < -clockJump {
			s.logger().Warn("the wall clock jumped during a wait for a usage-limit reset", "by", jump.Round(time.Second), "left", max(left, 0).Round(time.Second))
		}
		prev, prevElapsed = now, elapsed
		if left <= 0 {
			return ctx.Err() == nil
		}
		s.mu.Lock()
		if s.waiting != nil {
			s.waiting.until = now.Add(left)
		}
		s.mu.Unlock()
		if lastBeat < 0 || elapsed-lastBeat >= HeartbeatInterval {
			lastBeat = elapsed
			s.hub.emit(RetryHeartbeatEvent{Attempt: attempt, RemainingMs: left.Milliseconds()})
		}
		t.Reset(min(left, checkInterval))
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
}

// announceResetWait tells hooks and clients that retry n waits for a
// reset, and records the wait so a restart can resume it.
func (s *Session) announceResetWait(n, maxAttempts int, d retry.Decision, failure string) {
	until := s.wall().Add(d.Delay)
	s.mu.Lock()
	s.resetWaited = true
	if s.waiting != nil {
		s.waiting.until = until
	}
	s.mu.Unlock()
	s.hub.emit(RetryWaitingEvent{Attempt: n, DelayMs: d.Delay.Milliseconds(), UntilMs: until.UnixMilli(), Reason: d.Reason})
	s.recordWait(journal.Wait{Attempt: n, MaxAttempts: maxAttempts, Until: until.UTC(), Reason: failure})
}

// recordWait writes w to a Store that keeps waits.
func (s *Session) recordWait(w journal.Wait) {
	ws, ok := s.cfg.Store.(WaitStore)
	if !ok {
		return
	}
	if err := ws.AppendWait(w); err != nil {
		s.storeFailed(OpSaveWait, err)
	}
}

// OpSaveWait is session_error's Op when recording a wait for a reset failed.
const OpSaveWait = "save retry wait"
