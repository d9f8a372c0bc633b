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
	at := wallClock(now, now.Add(hint))
	if c == UsageLimit {
		msg := fmt.Sprintf("usage limit: resets at %s (in %s), longer than maxDelayMs %v", at, roughly(hint), maxDelay)
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

// wallClock writes t as a time of day, with the date when it is not today.
func wallClock(now, t time.Time) string {
	if y, m, d := now.Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// roughly writes d to the minute ("4h59m"), or to the second under a
// minute; nobody plans around the seconds of a five-hour wait.
func roughly(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String() // "4h59m0s"
	return s[:len(s)-2]
}
