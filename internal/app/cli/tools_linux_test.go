package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
)

// rallyProcess starts the test binary as rally (see TestMain).
func rallyProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestToolDiesWithRally kills rally with SIGKILL while a bash tool sleeps
// before its side effect: the side effect never happens, and --continue
// tells the model, as an error result, that the tool was started and its
// result lost, never that it did not run.
func TestToolDiesWithRally(t *testing.T) {
	isolate(t)
	const command = "echo $$ > shell.pid; sleep 2 & echo $! > sleep.pid; wait; echo done > effect.txt"
	fake := newRecorded(t, llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":` + quote(command) + `}`}}})
	flags := []string{"--api", "anthropic-messages", "--base-url", fake.url, "--model", "m"}
	cmd := rallyProcess(t, append(flags, "-p", "make the change")...)
	shell, sleeper := proctest.Pid(t, "shell.pid"), proctest.Pid(t, "sleep.pid")
	if !proctest.Alive(shell) {
		t.Fatal("the tool's shell is not running")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !proctest.Alive(sleeper) {
		t.Fatal("the machine was too slow: the sleep ended before rally was killed, so this run proves nothing")
	}
	// The shell dies with rally; the orphaned sleep runs out its time.
	// Once both are gone, a surviving shell would have written the file.
	proctest.Dead(t, shell)
	proctest.Dead(t, sleeper)
	if _, err := os.Stat("effect.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the side effect happened after rally was killed (%v)", err)
	}

	resumed := newRecorded(t, llmtest.Step{Text: "I will check first."})
	_, errOut, code := run(t, "", append(flags[:2:2], "--base-url", resumed.url, "--model", "m", "--continue", "-p", "did it work?")...)
	if code != 0 {
		t.Fatalf("--continue: exit %d: %s", code, errOut)
	}
	reqs := resumed.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(reqs[0]), &body); err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	for _, m := range body.Messages {
		var blocks []map[string]any
		json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b["type"] == "tool_result" && b["tool_use_id"] == "call_1" {
				result = b
			}
		}
	}
	if result == nil {
		t.Fatalf("no tool_result for the interrupted call in %s", reqs[0])
	}
	text, _ := json.Marshal(result["content"])
	if result["is_error"] != true || !strings.Contains(string(text), "the tool was started, but its result was lost when rally stopped") ||
		strings.Contains(string(text), "before it ran") {
		t.Fatalf("repaired result %v", result)
	}
}

// TestToolProcessesDieOnEveryExit: a background process a tool left
// running, and a command still running, die with rally however it ends.
func TestToolProcessesDieOnEveryExit(t *testing.T) {
	background := llmtest.ToolCall{Name: "bash", Arguments: `{"command":"sleep 60 >/dev/null 2>&1 & echo $! > bg.pid"}`}
	running := llmtest.ToolCall{Name: "bash", Arguments: `{"command":"sleep 60 & echo $! > fg.pid; wait"}`}
	cases := []struct {
		name   string
		last   llmtest.Step
		signal syscall.Signal // 0: rally ends on its own
		code   int
	}{
		{"normal exit", llmtest.Step{Text: "done"}, 0, 0},
		{"model error", llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Auth}, 0, 1},
		{"SIGTERM", llmtest.Step{ToolCalls: []llmtest.ToolCall{running}}, syscall.SIGTERM, -1},
		{"SIGINT", llmtest.Step{ToolCalls: []llmtest.ToolCall{running}}, syscall.SIGINT, -1},
		{"SIGHUP", llmtest.Step{ToolCalls: []llmtest.ToolCall{running}}, syscall.SIGHUP, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			fake := newRecorded(t, llmtest.Step{ToolCalls: []llmtest.ToolCall{background}}, c.last)
			cmd := rallyProcess(t, "--no-session", "--api", "openai-completions", "--base-url", fake.url+"/v1", "--model", "m", "-p", "go")
			bg := proctest.Pid(t, "bg.pid")
			var fg int
			if c.signal != 0 {
				fg = proctest.Pid(t, "fg.pid")
				cmd.Process.Signal(c.signal)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				t.Fatal("rally did not exit")
			}
			if c.code >= 0 && cmd.ProcessState.ExitCode() != c.code {
				t.Errorf("exit %d, want %d", cmd.ProcessState.ExitCode(), c.code)
			}
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
				t.Fatalf("rally died of %v instead of handling it", ws.Signal())
			}
			for _, pid := range []int{bg, fg} {
				if pid != 0 {
					proctest.Dead(t, pid)
				}
			}
		})
	}
}
