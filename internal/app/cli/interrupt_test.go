package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestInterrupt runs rally as a real process against a fake LLM that
// stalls mid-answer, sends it a signal once the request is in, and checks
// the exit status and the one line it prints.
func TestInterrupt(t *testing.T) {
	tests := []struct {
		name   string
		args   []string // before the fake LLM's flags
		sig    syscall.Signal
		code   int
		stderr string
	}{
		// Text print mode names the model it moved to first (not sim).
		{"ctrl-c in print mode", []string{"-p", "go"}, syscall.SIGINT, 130, "rally: using custom/m\nrally: interrupted\n"},
		{"ctrl-c in json mode", []string{"--mode", "json", "-p", "go"}, syscall.SIGINT, 130, "rally: interrupted\n"},
		{"sigterm", []string{"-p", "go"}, syscall.SIGTERM, 143, "rally: using custom/m\nrally: terminated\n"},
		{"ctrl-c in rally compact", []string{"compact"}, syscall.SIGINT, 130, "rally: interrupted\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			if tt.args[0] == "compact" {
				// Something to compact: one exchange with sim.
				if _, errOut, code := run(t, "", "-p", "hello"); code != 0 {
					t.Fatalf("first prompt: exit %d: %s", code, errOut)
				}
			}
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Stall, After: 1, Text: "this answer never ends"})
			cmd := exec.Command(os.Args[0], append(tt.args, "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			startUntilCalls(t, cmd, srv, 1)
			err := signalAndWait(t, cmd, tt.sig)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("exit: %v, want status %d", err, tt.code)
			}
			if got := stderr.String(); got != tt.stderr {
				t.Errorf("stderr %q, want %q", got, tt.stderr)
			}
			if tt.args[0] == "--mode" && !strings.Contains(stdout.String(), `"type":"agent_start"`) {
				t.Errorf("json mode stdout %q has no events", stdout.String())
			}
		})
	}
}
