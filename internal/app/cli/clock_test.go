package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/zonetest"
)

// morningClock is the clock of a test that prints times of day: the real
// instant (the fleet's marks expire in Redis by the real clock), shown in a
// zone where the test starts at 09:30, so "in 5 h" falls on the same day at
// every hour and whatever TZ the machine has.
func morningClock() func() time.Time {
	zone := morningZone(time.Now())
	return func() time.Time { return time.Now().In(zone) }
}

// morningZone is a zone in which at reads 09:30 (zonetest's rule).
func morningZone(at time.Time) *time.Location {
	return zonetest.At(at, 9*time.Hour+30*time.Minute)
}

// childZone is morningZone for a rally run as a child process: its TZ
// setting (a zoneinfo file) and the zone to read the child's times in.
func childZone(t *testing.T) (env string, loc *time.Location) {
	loc = morningZone(time.Now())
	return "TZ=" + zonetest.File(t, loc), loc
}

// runAt is run by the clock now.
func runAt(t *testing.T, now func() time.Time, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(streams{in: strings.NewReader(stdin), out: &out, err: &errb, now: now}, args)
	return out.String(), errb.String(), code
}
