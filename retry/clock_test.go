package retry

import (
	"testing"
	"time"
)

func TestWallClock(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 2, 12, 47, 0, 0, berlin)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"today, in now's zone", time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC), "15:00"},
		{"tomorrow names the day", time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC), "Dec 3 09:30"},
		{"today in UTC is tomorrow in now's zone", time.Date(2026, 12, 2, 23, 30, 0, 0, time.UTC), "Dec 3 00:30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WallClock(now, tt.t); got != tt.want {
				t.Errorf("WallClock = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRoughly(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{4*time.Hour + 59*time.Minute + 10*time.Second, "4h59m"},
		{90 * time.Second, "2m"},
		{1500 * time.Millisecond, "2s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Roughly(tt.d); got != tt.want {
				t.Errorf("Roughly(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
