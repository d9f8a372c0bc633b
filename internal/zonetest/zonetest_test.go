package zonetest

import (
	"os"
	"testing"
	"time"
)

// TestAt: at every minute of a day (and a second and a fraction past it),
// the zone shows the chosen time of day, with an offset a real zone could
// have.
func TestAt(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 17, 250, time.UTC)
	for _, clock := range []time.Duration{9*time.Hour + 30*time.Minute, 4*time.Hour + 30*time.Minute, 23 * time.Hour} {
		for m := 0; m < 24*60; m++ {
			at := day.Add(time.Duration(m) * time.Minute)
			zone := At(at, clock)
			want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(clock).Format("15:04")
			if got := at.In(zone).Format("15:04"); got != want {
				t.Fatalf("at %s UTC the zone shows %s, want %s", at.Format("15:04:05"), got, want)
			}
			if _, off := at.In(zone).Zone(); off < -12*3600 || off > 14*3600 || off%60 != 0 {
				t.Fatalf("at %s UTC the offset is %ds", at.Format("15:04:05"), off)
			}
			b, _ := at.In(zone).MarshalJSON() // the way a fleet mark goes through Redis
			var back time.Time
			if err := back.UnmarshalJSON(b); err != nil || !back.Equal(at) {
				t.Fatalf("%s came back from JSON as %s (%v)", at, back, err)
			}
		}
	}
}

// TestFile: the file is a zone the time package loads, at the offset of
// the zone it was written from, at every instant.
func TestFile(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 12, 1, 18, 52, 0, 0, time.UTC), // a negative offset
		time.Date(2026, 12, 1, 3, 7, 0, 0, time.UTC),   // a positive one
		time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),  // none
	} {
		t.Run(at.Format("15:04"), func(t *testing.T) {
			zone := At(at, 9*time.Hour+30*time.Minute)
			data, err := os.ReadFile(File(t, zone))
			if err != nil {
				t.Fatal(err)
			}
			loc, err := time.LoadLocationFromTZData("test", data)
			if err != nil {
				t.Fatalf("the file does not load: %v", err)
			}
			for _, when := range []time.Time{at, at.Add(-40 * 365 * 24 * time.Hour), at.Add(30 * 365 * 24 * time.Hour)} {
				if got, want := when.In(loc).Format(time.RFC3339+" MST"), when.In(zone).Format(time.RFC3339+" MST"); got != want {
					t.Errorf("the file shows %s, the zone %s", got, want)
				}
			}
		})
	}
}
