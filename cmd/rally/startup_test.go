package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkVersion is the wall time of `rally --version`: process start,
// package init, cobra, exit (the budget: 20 ms).
//
//	go test -run '^$' -bench Version ./cmd/rally
func BenchmarkVersion(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "rally")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for b.Loop() {
		if err := exec.Command(bin, "--version").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
}
