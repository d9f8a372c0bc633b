package retry

import "time"

// WallClock writes t as a time of day in now's location, with the date
// when it is not now's day: "15:00", "Dec 3 09:30". It is the one way
// rally writes a time a user acts on ("come back at 15:00"): the policy's
// reasons, the faces' countdowns and rally auth list all call it, so
// they never disagree about a reset. It lives here because retry imports
// nothing of rally and everything else imports retry.
func WallClock(now, t time.Time) string {
	t = t.In(now.Location())
	if y, m, d := now.Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// Roughly writes d to the minute ("4h59m"), or to the second under a
// minute; nobody plans around the seconds of a five-hour wait.
func Roughly(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String() // "4h59m0s"
	return s[:len(s)-2]
}
