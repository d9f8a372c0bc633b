package clockfmt

import (
	"testing"
	"time"
)

func TestLeft(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{2*time.Hour + 13*time.Minute, "2h 13m"},
		{2*time.Hour + 12*time.Minute + time.Second, "2h 13m"}, // rounded up
		{2 * time.Hour, "2h"},
		{59*time.Minute + 30*time.Second, "1h"},
		{5 * time.Minute, "5m"},
		{45 * time.Second, "45s"},
		{1500 * time.Millisecond, "2s"},
		{-time.Second, "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Left(tt.d); got != tt.want {
				t.Errorf("Left(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
