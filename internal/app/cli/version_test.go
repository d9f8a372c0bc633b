package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	src := func(mod string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/rally-agent/rally", Version: mod}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "239d8d7abc1234567890239d8d7abc1234567890"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	tests := []struct {
		name     string
		override string
		bi       *debug.BuildInfo
		want     string
	}{
		{"go install module@version", "dev", src("v1.2.3"), "v1.2.3"},
		{"go install module@commit", "dev", src("v0.0.0-20261201122000-239d8d7abc12"), "v0.0.0-20261201122000-239d8d7abc12"},
		{"source build", "dev", src("v0.0.0-20261201122000-239d8d7abc12", rev, clean), "dev (239d8d7abc12)"},
		{"source build with changes", "dev", src("v0.0.0-20261201122000-239d8d7abc12+dirty", rev, dirty), "dev (239d8d7abc12, modified)"},
		{"source build without vcs", "dev", src("(devel)"), "dev"},
		{"no build info", "dev", nil, "dev"},
		{"ldflags wins", "v9.9.9", src("v1.2.3", rev), "v9.9.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.override, tt.bi); got != tt.want {
				t.Errorf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkBuildVersion is what --version adds to every start: reading
// the build info (the startup budget is BenchmarkVersion in cmd/rally).
func BenchmarkBuildVersion(b *testing.B) {
	for b.Loop() {
		_ = buildVersion()
	}
}
