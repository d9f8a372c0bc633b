package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestInterrupt runs rally as a real process against a fake LLM that
// stalls mid-answer, sends it a signal once the request is in, and checks
// the exit status and the one line it prints.
func TestInterrupt(t *testing.T) {
	tests := []struct {
		name   string
		mode   string
		sig    syscall.Signal
		code   int
		stderr string
	}{
		{"ctrl-c in print mode", "text", syscall.SIGINT, 130, "rally: interrupted\n"},
		{"ctrl-c in json mode", "json", syscall.SIGINT, 130, "rally: interrupted\n"},
		{"sigterm", "text", syscall.SIGTERM, 143, "rally: terminated\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Stall, After: 1, Text: "this answer never ends"})
			cmd := exec.Command(os.Args[0], "--mode", tt.mode, "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "go")
			cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(srv.Requests()) < 1 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("rally never called the model")
				}
				time.Sleep(5 * time.Millisecond)
			}
			cmd.Process.Signal(tt.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("rally did not stop on the signal")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("exit: %v, want status %d", err, tt.code)
			}
			if got := stderr.String(); got != tt.stderr {
				t.Errorf("stderr %q, want %q", got, tt.stderr)
			}
			if tt.mode == "json" && !strings.Contains(stdout.String(), `"type":"agent_start"`) {
				t.Errorf("json mode stdout %q has no events", stdout.String())
			}
		})
	}
}
