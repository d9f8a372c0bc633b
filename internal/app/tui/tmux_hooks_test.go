package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestTmuxHooks runs hooks in the UI: one appends each agent_settled event
// to a file, one fails every time (its exit status counts its runs), one
// hangs. The failing hook is named in the status line once per burst, the
// hooks follow /new, and quitting waits for the hanging one only the
// grace.
func TestTmuxHooks(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Status: 503},
		llmtest.Step{Fault: llmtest.HTTPError, Status: 503},
		llmtest.Step{Text: "The first answer."},
		llmtest.Step{Text: "The second answer."},
	)
	settings := `{
  "retry": {"baseDelayMs": 100},
  "hooksGraceMs": 500,
  "hooks": [
    {"on": ["agent_settled"], "command": ["sh", "-c", "cat >> settled.jsonl"]},
    {"on": ["auto_retry_start", "agent_settled"], "command": ["sh", "-c", "echo \"$RALLY_EVENT\" >> failing.txt; exit $(wc -l < failing.txt)"]},
    {"on": ["agent_settled"], "command": ["sh", "-c", "touch hanging.txt; exec sleep 30"], "timeoutMs": 60000}
  ]
}`
	p := startRally(t, srv, 120, 30, settings, "the first prompt")
	const first = "hook failed: hooks[1] (sh) on auto_retry_start: exit status 1"
	s := p.waitFor("the answer and the first failure", func(s string) bool {
		return strings.Contains(s, "The first answer.") && idle(s) && strings.Contains(s, first)
	})
	if n := strings.Count(s, "hook failed"); n != 1 {
		t.Fatalf("the failure shows %d times:\n%s", n, s)
	}
	if last := s[strings.LastIndex(strings.TrimRight(s, "\n"), "\n")+1:]; !strings.Contains(last, first) {
		t.Fatalf("the failure is not in the status line %q", last)
	}

	// The failing hook runs its events one after the other: once it has
	// written agent_settled, the UI has been sent its second failure (exit
	// status 2, the second retry). A key pressed now is handled after it,
	// and the status line still names only the first of the burst.
	p.waitFile("failing.txt", "auto_retry_start\nauto_retry_start\nagent_settled\n")
	p.typeLine("/session")
	s = p.waitText("Messages:")
	if !strings.Contains(s, first) || strings.Contains(s, "exit status 2") || strings.Contains(s, "on agent_settled") {
		t.Fatalf("a repeat of the burst replaced the first failure:\n%s", s)
	}

	// The hook that writes a file ran in the UI, with the event on stdin.
	settled := p.waitLines("settled.jsonl", 1)
	var e struct{ Type string }
	if err := json.Unmarshal([]byte(settled[0]), &e); err != nil || e.Type != "agent_settled" {
		t.Fatalf("settled.jsonl: %q (%v)", settled[0], err)
	}

	// /new ends the burst and clears the line; the hooks follow the new
	// session: its agent_settled runs them again and the failure (the
	// fourth run) shows.
	p.typeLine("/new")
	s = p.waitText("New session")
	if strings.Contains(s, "hook failed") {
		t.Fatalf("the failure stayed after /new:\n%s", s)
	}
	p.typeLine("the second prompt")
	p.waitFor("the second answer and its failure", func(s string) bool {
		return strings.Contains(s, "The second answer.") && idle(s) &&
			strings.Contains(s, "hook failed: hooks[1] (sh) on agent_settled: exit status 4")
	})
	p.waitLines("settled.jsonl", 2)

	// The hanging hook is running; quitting waits for it the 500 ms
	// grace, not its 30 s, and then names each failing hook once.
	p.waitLines("hanging.txt", 0)
	quit := time.Now()
	p.typeLine("/quit")
	exit := p.waitExit()
	if took := time.Since(quit); took < 500*time.Millisecond || took > 10*time.Second {
		t.Fatalf("rally exited %v after /quit, want the 500 ms grace (and less than the hook's 30 s)", took)
	}
	if !strings.HasPrefix(exit, "exit 0\n") {
		t.Fatalf("rally did not exit 0: %q", exit)
	}
	s = p.screen()
	if n := strings.Count(s, "rally: hook hooks[1] (sh) on auto_retry_start: exit status 1"); n != 1 {
		t.Fatalf("the exit summary names the failing hook %d times:\n%s", n, s)
	}
}

// waitFile waits until the file name in the pane's directory holds want.
func (p *pane) waitFile(name, want string) {
	p.t.Helper()
	var got []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = os.ReadFile(filepath.Join(p.dir, name)); string(got) == want {
			return
		}
	}
	p.t.Fatalf("%s holds %q, want %q", name, got, want)
}

// waitLines waits until the file name in the pane's directory exists
// with at least n complete lines, and returns them.
func (p *pane) waitLines(name string, n int) []string {
	p.t.Helper()
	var got []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if got, err = os.ReadFile(filepath.Join(p.dir, name)); err == nil && strings.Count(string(got), "\n") >= n {
			return strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		}
	}
	p.t.Fatalf("%s holds %q, want %d line(s)", name, got, n)
	return nil
}
