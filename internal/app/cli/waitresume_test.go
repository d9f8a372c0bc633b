package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestWaitResumesAfterRestart runs rally as a real process against the
// fake LLM, whose usage limit lifts after 3 s; kills it during the wait for
// the reset; and continues the session: print mode with --wait-for-reset
// resumes the wait for what is left of it, answers the interrupted prompt,
// then the new one. Without --wait-for-reset it only says how to resume.
func TestWaitResumesAfterRestart(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		stdout  string
		said    string
		limited int // 429s the fake sent in all
	}{
		{"resumed", []string{"--wait-for-reset"}, "the refactor is done\n\nand this is next\n", "was interrupted; resuming it", 1},
		{"not resumed", nil, "the refactor is done\n", "was interrupted; --wait-for-reset resumes it", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := isolate(t)
			tz, loc := childZone(t)
			if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retry":{"waitForReset":{"marginMs":0}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 3 * time.Second},
				llmtest.Step{Text: "the refactor is done"}, llmtest.Step{Text: "and this is next"})
			target := []string{"--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}
			first := exec.Command(os.Args[0], append([]string{"--wait-for-reset", "-p", "refactor it"}, target...)...)
			first.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1", tz, "RALLY_API_KEY=sk-test-0000000000001234")
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			w := waitInFile(t, home, first)
			// The credential is marked meanwhile, so other rallies on this
			// machine (or the fleet) skip it instead of hammering it.
			if marks, err := os.ReadFile(filepath.Join(home, "auth-marks.json")); err != nil || !strings.Contains(string(marks), "blockedUntil") {
				t.Errorf("auth-marks.json during the wait: %s, %v; want the credential marked", marks, err)
			}
			first.Process.Kill()
			first.Wait()

			second := exec.Command(os.Args[0], append(append([]string{"--continue", "-p", "next?"}, tt.flags...), target...)...)
			second.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1", tz)
			var stdout, stderr bytes.Buffer
			second.Stdout, second.Stderr = &stdout, &stderr
			if tt.flags == nil {
				// The prompt goes on without the wait: the fake's limit
				// has to have lifted for it.
				time.Sleep(time.Until(w.Until))
			}
			if err := second.Run(); err != nil {
				t.Fatalf("rally --continue: %v\n%s", err, stderr.String())
			}
			want := "rally: a usage-limit wait until " + w.Until.In(loc).Format("15:04") + " " + tt.said
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), want)
			}
			if tt.flags != nil && !strings.Contains(stderr.String(), "rally: retry 1 succeeded") {
				t.Errorf("stderr %q, want the resumed retry to succeed", stderr.String())
			}
			if got := stdout.String(); got != tt.stdout {
				t.Errorf("stdout %q, want %q", got, tt.stdout)
			}
			limited := 0
			for _, r := range srv.Requests() {
				if r.Outcome == "http 429" {
					limited++
				}
			}
			if limited != tt.limited {
				t.Errorf("%d usage limits sent, want %d: the resumed retry came before the reset", limited, tt.limited)
			}
		})
	}
}

// waitInFile waits until cmd's session file records a wait for a reset.
func waitInFile(t *testing.T, home string, cmd *exec.Cmd) *journal.Wait {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if files := sessionFiles(t, home); len(files) == 1 {
			if w, _ := journal.InterruptedWait(files[0]); w != nil {
				return w
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatal("rally recorded no wait for the reset")
	return nil
}

// TestResetWaitCtrlC: Ctrl-C ends print mode's two-hour wait for a reset
// at once, as it ends any wait.
func TestResetWaitCtrlC(t *testing.T) {
	home := isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 2 * time.Hour})
	cmd := exec.Command(os.Args[0], "--wait-for-reset", "-p", "refactor it", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1", "TZ=UTC")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitInFile(t, home, cmd)
	began := time.Now()
	err := signalAndWait(t, cmd, syscall.SIGINT)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want 130", err)
	}
	if !strings.Contains(stderr.String(), "waiting for the reset at") || !strings.HasSuffix(stderr.String(), "rally: interrupted\n") {
		t.Errorf("stderr %q", stderr.String())
	}
	t.Logf("Ctrl-C ended the wait in %v", time.Since(began))
}

// TestResetWaitHook: a hook on retry_waiting gets the wait, so a user can
// be told that rally waits until the reset.
func TestResetWaitHook(t *testing.T) {
	home := isolate(t)
	out := filepath.Join(t.TempDir(), "waiting.json")
	hook := filepath.Join(t.TempDir(), "notify")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	settingsJSON := `{"retry":{"waitForReset":{"enabled":true,"marginMs":0}},"hooks":[{"on":["retry_waiting"],"command":["` + hook + `","` + out + `"]}]}`
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settingsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: time.Second}, llmtest.Step{Text: "back"})
	cmd := rallyCmd("--no-session", "-p", "hi", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rally: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(got), `"type":"retry_waiting"`) || !strings.Contains(string(got), `"untilMs":`) {
		t.Errorf("the hook got %q (%v), want the retry_waiting event", got, err)
	}
}

// signalAndWait sends sig to cmd and returns how it exited; a rally that
// does not stop within 10 s fails the test.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) error {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("rally did not stop on %v", sig)
		return nil
	}
}
