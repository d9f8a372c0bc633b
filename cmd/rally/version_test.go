package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersion builds rally the two ways a user gets it from source and
// checks what --version says: a plain build names the commit it came
// from, and a release build's -ldflags override wins.
func TestVersion(t *testing.T) {
	// Outside a git checkout there is no revision to name, and neither is
	// there in a git worktree: the go command stamps VCS information only
	// where .git is a directory.
	plain, want := []string{"-buildvcs=false"}, "rally version dev\n"
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err == nil {
		if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err == nil && fi.IsDir() {
			rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
			if err != nil {
				t.Fatal(err)
			}
			plain, want = []string{"-buildvcs=true"}, "rally version dev ("+string(rev[:12])
		}
	}
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{"source build", plain, want},
		{"ldflags override", []string{"-ldflags", "-X github.com/rally-agent/rally/internal/app/cli.version=v1.2.3"}, "rally version v1.2.3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "rally")
			args := append(append([]string{"build", "-o", bin}, tt.flags...), ".")
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Fatalf("go %v: %v\n%s", args, err, out)
			}
			out, err := exec.Command(bin, "--version").Output()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), tt.want) {
				t.Errorf("--version printed %q, want it to start with %q", out, tt.want)
			}
		})
	}
}
