//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSettingsFileNotRegular: a cloned repository whose
// .rally/settings.json is a FIFO or a link to /dev/zero. rally, a real
// process, refuses the file at once, naming it; before,
// it hung on the FIFO (deaf to SIGINT and SIGTERM) and read /dev/zero
// until the OOM killer came.
func TestSettingsFileNotRegular(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a FIFO"},
		{"dev zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "a character device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			if err := os.MkdirAll(".rally", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(".rally/settings.json"); err != nil {
				t.Fatal(err)
			}
			// Generous for a loaded machine; the hang it catches is forever.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "--no-session", "-p", "hi")
			cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
			var errb strings.Builder
			cmd.Stderr = &errb
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("rally still running after 30s: %s", errb.String())
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code == 0 || !strings.Contains(errb.String(), ".rally/settings.json") || !strings.Contains(errb.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want a failure naming the file as %s", code, errb.String(), tt.want)
			}
		})
	}
}

// TestConcurrentSettingsSet: rally processes that set different keys of
// one file at the same time. Each either exits 0 with its key in the file,
// or fails saying the file changed on disk; none reports success for a key
// the file lost (6 of 20 trials did before the lock).
func TestConcurrentSettingsSet(t *testing.T) {
	isolate(t)
	if err := os.MkdirAll(".rally", 0o755); err != nil {
		t.Fatal(err)
	}
	// Built-in providers, so that every key is valid on its own.
	names := []string{"openai", "anthropic", "google", "openrouter", "groq", "local", "sim"}
	procs := len(names)
	for round := range 3 {
		if err := os.WriteFile(".rally/settings.json", []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		codes := make([]int, procs)
		stderr := make([]string, procs)
		for i := range procs {
			wg.Go(func() {
				_, stderr[i], codes[i] = runMain(t, "settings", "set", "--project", "providers."+names[i]+".maxRetries", "1")
			})
		}
		wg.Wait()
		b, err := os.ReadFile(".rally/settings.json")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Providers map[string]json.RawMessage `json:"providers"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("round %d: file %q: %v", round, b, err)
		}
		ok := 0
		for i := range procs {
			_, there := doc.Providers[names[i]]
			switch {
			case codes[i] == 0 && !there:
				t.Errorf("round %d: process %d exited 0 but its key is lost; file %s", round, i, b)
			case codes[i] == 0:
				ok++
			case !strings.Contains(stderr[i], "changed on disk"):
				t.Errorf("round %d: process %d: exit %d, %q; want a changed-on-disk error", round, i, codes[i], stderr[i])
			}
		}
		if ok == 0 {
			t.Errorf("round %d: no process saved", round)
		}
	}
}
