package retry

import (
	"fmt"
	"time"
)

// tooLong is the reason to give up on a wait longer than maxDelay. With a
// clock it names the wall-clock time, which is what a user acts on ("come
// back at 15:04"), not only the duration the policy compared; without one
// (a zero now) only the durations. switchFailed adds that there was
// nowhere else to go.
func tooLong(c Class, hint, maxDelay time.Duration, now time.Time, switchFailed bool) string {
	if now.IsZero() {
		msg := fmt.Sprintf("provider asked for %v, longer than maxDelayMs %v", hint, maxDelay)
		if switchFailed {
			msg += ", and nothing else to switch to is usable"
		}
		return msg
	}
	at := WallClock(now, now.Add(hint))
	if c == UsageLimit {
		msg := fmt.Sprintf("usage limit: resets at %s (in %s), longer than maxDelayMs %v", at, Roughly(hint), maxDelay)
		if switchFailed {
			msg += ", and no other credential or fallback model is usable"
		}
		return msg
	}
	// A transient error never rotates the credential, only the model.
	msg := fmt.Sprintf("provider asked for %v, longer than maxDelayMs %v; try again at %s", hint, maxDelay, at)
	if switchFailed {
		msg += ", and no fallback model is usable"
	}
	return msg
}
