package print

import (
	"fmt"
	"time"

	"github.com/rally-agent/rally/internal/clockfmt"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// BeatEvery is how often print mode on a terminal says that a wait for a
// usage limit's reset goes on: often enough to see that rally is alive,
// rarely enough that hours of waiting fill no screen.
const BeatEvery = 5 * time.Minute

// resetWait is a wait for a usage limit's reset being shown: one line when
// it starts, then on a terminal a line every BeatEvery.
type resetWait struct {
	attempt  int
	until    time.Time
	lastLine time.Time
}

// resetEvent shows the events of a wait for a reset; it reports whether e
// was one. The caller holds t.mu. Such a wait is announced by its own
// line, so the auto_retry_start after retry_waiting shows nothing more.
func (t *Text) resetEvent(e session.Event) bool {
	switch e := e.(type) {
	case session.RetryWaitingEvent:
		now := t.now()
		t.reset = &resetWait{attempt: e.Attempt, until: time.UnixMilli(e.UntilMs), lastLine: now}
		t.out.Flush()
		// A reset learned from an earlier limit says so, in the policy's
		// words, as RPC's retry_waiting reason does.
		learned := ""
		if retry.IsLearned(e.Reason) {
			learned = ", " + retry.LearnedReset
		}
		fmt.Fprintf(t.err, "rally: usage limit: waiting for the reset at %s (in %s%s), then retry %d; Ctrl-C cancels\n",
			retry.WallClock(now, t.reset.until), clockfmt.Left(time.Duration(e.DelayMs)*time.Millisecond), learned, e.Attempt)
		return true
	case session.RetryHeartbeatEvent:
		w := t.reset
		if w == nil || !t.tty {
			return true
		}
		if now := t.now(); now.Sub(w.lastLine) >= BeatEvery {
			w.lastLine = now
			fmt.Fprintf(t.err, "rally: still waiting for the reset at %s (%s left)\n",
				retry.WallClock(now, w.until), clockfmt.Left(time.Duration(e.RemainingMs)*time.Millisecond))
		}
		return true
	case session.AutoRetryStartEvent:
		return t.reset != nil && t.reset.attempt == e.Attempt
	case session.AutoRetryEndEvent:
		t.reset = nil
	}
	return false
}
