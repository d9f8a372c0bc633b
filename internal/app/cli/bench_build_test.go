package cli

import (
	"runtime/debug"
	"testing"
)

func TestBuildNote(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		size int64
		want string
	}{
		{"default build", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}}, 24_162_000, "cgo on, 24.2 MB binary"},
		{"static build", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"}}}, 22_900_000, "CGO_ENABLED=0, 22.9 MB binary"},
		{"no build info", nil, -1, "cgo unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildNote(tt.info, tt.size); got != tt.want {
				t.Fatalf("buildNote = %q, want %q", got, tt.want)
			}
		})
	}
}
