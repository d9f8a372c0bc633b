package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// morningClock is the clock of a test that prints times of day: the real
// instant (the fleet's marks expire in Redis by the real clock), shown in a
// zone where the test starts at 09:30, so "in 5 h" falls on the same day at
// every hour and whatever TZ the machine has.
func morningClock() func() time.Time {
	zone := morningZone(time.Now())
	return func() time.Time { return time.Now().In(zone) }
}

// morningZone is a zone in which at reads 09:30. Its offset is whole
// minutes: a time written as RFC 3339 (a mark in Redis) keeps no seconds
// of it.
func morningZone(at time.Time) *time.Location {
	utc := at.UTC()
	midnight := time.Date(utc.Year(), utc.Month(), utc.Day(), 0, 0, 0, 0, time.UTC)
	off := 9*time.Hour + 30*time.Minute - utc.Sub(midnight).Truncate(time.Minute)
	if off < -12*time.Hour {
		off += 24 * time.Hour
	}
	return time.FixedZone("TEST", int(off/time.Second))
}

// runAt is run by the clock now.
func runAt(t *testing.T, now func() time.Time, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(streams{in: strings.NewReader(stdin), out: &out, err: &errb, now: now}, args)
	return out.String(), errb.String(), code
}

// TestMorningZone: at every hour of the day, the zone shows 09:30.
func TestMorningZone(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 17, 250, time.UTC)
	for m := 0; m < 24*60; m += 7 {
		at := day.Add(time.Duration(m) * time.Minute)
		zone := morningZone(at)
		if got := at.In(zone).Format("15:04"); got != "09:30" {
			t.Fatalf("at %s UTC the zone shows %s, want 09:30", at.Format("15:04:05"), got)
		}
		// What the marks go through in Redis.
		b, _ := at.In(zone).MarshalJSON()
		var back time.Time
		if err := back.UnmarshalJSON(b); err != nil || !back.Equal(at) {
			t.Fatalf("%s came back from JSON as %s (%v)", at, back, err)
		}
	}
}
