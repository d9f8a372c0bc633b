package journal

import (
	"testing"
	"time"
)

// FuzzParseStamp holds parseStamp to time.Parse(time.RFC3339Nano): the
// same time and the same refusals; a time read by hand in the same form
// (== on time.Time compares its location and encoding too). A time with
// an offset goes to time.Parse itself, whose zone is a new one on each
// call: for those, the same instant and zone.
func FuzzParseStamp(f *testing.F) {
	for _, s := range []string{
		"2026-12-03T10:52:02.946Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z",
		"0000-01-01T00:00:00.0Z", "0000-03-01T00:00:00.5Z", "9999-12-31T23:59:59.123456789Z",
		"1969-12-31T23:59:59.999Z", "2026-12-03T10:52:02Z", "2026-12-03T10:52:02.946+02:00",
		"2026-13-03T10:52:02.946Z", "2026-12-03T24:00:00.000Z", "2026-12-03T10:60:02.946Z",
		"2026-12-03T10:52:60.946Z", "2026-12-00T10:52:02.946Z", "2026-12-03T10:52:02.Z",
		"2026-12-03T10:52:02.1234567890Z", "2026-12-03t10:52:02.946z", "2026-1a-03T10:52:02.946Z",
		"1900-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseStamp(s)
		want, err := time.Parse(time.RFC3339Nano, s)
		_, byHand := isoStamp(s)
		same := got == want || !byHand && got.Equal(want) && got.Location().String() == want.Location().String()
		if ok != (err == nil) || ok && !same {
			t.Fatalf("parseStamp(%q) = %v, %v; time.Parse: %v, %v", s, got, ok, want, err)
		}
	})
}

// TestIsoStampReadsEveryDay: every day from 1600 to 2400, at a time of
// day and fraction that vary with it, as time.Parse reads it; and the
// hand-read path, not time.Parse's, is the one that read them.
func TestIsoStampReadsEveryDay(t *testing.T) {
	day := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2400, 12, 31, 0, 0, 0, 0, time.UTC)
	for i := 0; !day.After(end); i++ {
		at := day.Add(time.Duration(i%86400)*time.Second + time.Duration(i%1000)*time.Millisecond)
		s := at.Format("2006-01-02T15:04:05.000Z")
		got, ok := isoStamp(s)
		if want, _ := time.Parse(time.RFC3339Nano, s); !ok || got != want {
			t.Fatalf("isoStamp(%q) = %v, %v; want %v", s, got, ok, want)
		}
		day = day.AddDate(0, 0, 1)
	}
}
