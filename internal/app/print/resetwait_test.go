package print

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/session"
)

// TestResetWaitLines: a wait for a usage limit's reset is one line, then
// on a terminal a line every BeatEvery (none into a pipe), never the
// per-second countdown of a short retry wait; the time is the clock's zone.
func TestResetWaitLines(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	start := time.Date(2026, 12, 2, 12, 47, 0, 0, zone)
	until := start.Add(2*time.Hour + 13*time.Minute)
	const first = "rally: usage limit: waiting for the reset at 15:00 (in 2h 13m), then retry 1; Ctrl-C cancels\n"
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal", true, first +
			"rally: still waiting for the reset at 15:00 (2h 8m left)\n" +
			"rally: still waiting for the reset at 15:00 (2h 3m left)\n" +
			"rally: retry 1 succeeded\n"},
		{"pipe", false, first + "rally: retry 1 succeeded\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			var out, errw bytes.Buffer
			to := NewText(&out, &errw, Options{TTY: tt.tty, Now: func() time.Time { return now }})
			d := until.Sub(start)
			to.Event(session.RetryWaitingEvent{Attempt: 1, DelayMs: d.Milliseconds(), UntilMs: until.UnixMilli(), Reason: "usage limit"})
			to.Event(session.AutoRetryStartEvent{Attempt: 1, MaxAttempts: 3, DelayMs: d.Milliseconds(), ErrorMessage: "429 usage limit"})
			// Heartbeats every 10 s for 11 minutes: two lines on a terminal.
			for s := 10 * time.Second; s <= 11*time.Minute; s += 10 * time.Second {
				now = start.Add(s)
				to.Event(session.RetryHeartbeatEvent{Attempt: 1, RemainingMs: (d - s).Milliseconds()})
			}
			to.Event(session.AutoRetryEndEvent{Success: true, Attempt: 1})
			to.Finish(nil)
			if got := errw.String(); got != tt.want {
				t.Errorf("stderr\n%s\nwant\n%s", got, tt.want)
			}
			if strings.Contains(errw.String(), "\r") {
				t.Error("a countdown was drawn")
			}
		})
	}
}
