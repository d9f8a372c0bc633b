// Package clockfmt writes the time left of a long wait the way every face
// shows it: "resumes at 15:00 (in 2h 13m)". One rule, so the terminal UI,
// print mode and the web console say the same thing; the time of day
// ("15:00") is retry.WallClock, which the policy's reasons use too.
package clockfmt

import (
	"fmt"
	"time"
)

// Left writes a remaining time in hours and minutes, rounded up so that a
// wait never reads shorter than it is: "2h 13m", "5m", and under a minute
// "45s".
func Left(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second))
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	if m%60 == 0 {
		return fmt.Sprintf("%dh", m/60)
	}
	return fmt.Sprintf("%dh %dm", m/60, m%60)
}
