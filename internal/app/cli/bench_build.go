package cli

import (
	"fmt"
	"os"
	"runtime/debug"
)

// buildNote says which build of rally the bench measured: start-up time
// and idle memory depend on it (most of an idle process's RSS is pages of
// its own binary, and a cgo build maps the C library and its loader
// besides; docs/benchmarks.md, "Start-up"). size < 0: unknown.
func buildNote(info *debug.BuildInfo, size int64) string {
	cgo := "cgo unknown"
	if info != nil {
		cgo = "cgo on"
		for _, s := range info.Settings {
			if s.Key == "CGO_ENABLED" && s.Value == "0" {
				cgo = "CGO_ENABLED=0"
			}
		}
	}
	if size < 0 {
		return cgo
	}
	return fmt.Sprintf("%s, %.1f MB binary", cgo, float64(size)/1e6)
}

// selfBuild is buildNote of the running binary.
func selfBuild() string {
	info, _ := debug.ReadBuildInfo()
	size := int64(-1)
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			size = fi.Size()
		}
	}
	return buildNote(info, size)
}
