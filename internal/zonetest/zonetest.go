// Package zonetest gives tests that print times of day a zone of their own:
// one in which the test starts at a chosen time of day, whatever the hour
// the test runs at and whatever TZ the machine has. A wait of hours then
// falls on the same day at every hour, so a time shown as "15:04" cannot
// turn into "Dec 3 00:11" because CI ran late in the evening.
//
// At gives the zone to code in the test's own process; File writes it as a
// zoneinfo file for a rally started as a child process (TZ=/path), since a
// child's zone can only come from its environment.
package zonetest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Name is the abbreviation the zones are given.
const Name = "TEST"

// At returns a fixed zone in which at reads the time of day clock (09:30
// is 9*time.Hour + 30*time.Minute). Its offset is whole minutes, so a time
// written as RFC 3339 keeps all of it, and it lies within a day of UTC.
func At(at time.Time, clock time.Duration) *time.Location {
	utc := at.UTC()
	midnight := time.Date(utc.Year(), utc.Month(), utc.Day(), 0, 0, 0, 0, time.UTC)
	off := clock - utc.Sub(midnight).Truncate(time.Minute)
	if off < -12*time.Hour {
		off += 24 * time.Hour
	}
	if off > 14*time.Hour {
		off -= 24 * time.Hour
	}
	return time.FixedZone(Name, int(off/time.Second))
}

// File writes loc, a fixed zone as At's are, as a zoneinfo (TZif) file in
// a directory of t's and returns its absolute path, for a child's TZ.
func File(t testing.TB, loc *time.Location) string {
	t.Helper()
	_, off := time.Unix(0, 0).In(loc).Zone()
	path := filepath.Join(t.TempDir(), "zone")
	if err := os.WriteFile(path, tzif(off), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tzif encodes a version 1 TZif file (RFC 8536) with no transitions and
// one local time type, offset seconds east of UTC: a zone that is always
// at that offset.
func tzif(offset int) []byte {
	abbr := Name + "\x00"
	b := []byte("TZif")
	b = append(b, 0)                   // version 1: no second header follows
	b = append(b, make([]byte, 15)...) // reserved
	// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt.
	for _, n := range []int{0, 0, 0, 0, 1, len(abbr)} {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(int32(offset))) // utoff
	b = append(b, 0, 0)                                         // isdst, desigidx
	return append(b, abbr...)
}
