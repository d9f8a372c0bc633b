package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
)

var (
	failFalse = HookFailure{Hook: "hooks[1] (false)", Event: "agent_settled", Reason: "exit status 1"}
	failSlow  = HookFailure{Hook: "hooks[2] (slow.sh)", Event: "auto_retry_start", Reason: "killed at its timeout"}
)

const shownFalse = "hook failed: hooks[1] (false) on agent_settled: exit status 1"

// hookFail delivers f as Alerts would and returns the expiry command.
func hookFail(m *Model, f HookFailure) tea.Cmd {
	_, cmd := m.Update(hookFailMsg{f})
	return cmd
}

func TestHookFailureBurst(t *testing.T) {
	m, f := testModel(t, Options{})
	finish := func() {
		ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("Hello.")}}})
		ev(m, settledMsg{})
	}
	startRun(t, m, f, "hi", "")
	finish()
	if strings.Contains(statusOf(m), "hook failed") {
		t.Fatalf("a failure shows before any: %q", statusOf(m))
	}

	// The first failure of a burst shows, with an expiry tick (made
	// short here so that the test can wait for it).
	m.hooks.showFor = time.Millisecond
	tick := hookFail(m, failFalse)
	if tick == nil {
		t.Fatal("no expiry tick for the shown failure")
	}
	if !strings.Contains(statusOf(m), shownFalse) {
		t.Fatalf("status %q, want %q", statusOf(m), shownFalse)
	}
	golden(t, "hook-failure", screen(m))
	expire := tick()

	// The same hook failing again in the burst, on another event, is not
	// shown again and does not extend the notice.
	again := failFalse
	again.Event = "auto_retry_end"
	if hookFail(m, again) != nil || !strings.Contains(statusOf(m), shownFalse) || strings.Contains(statusOf(m), "auto_retry_end") {
		t.Fatalf("a repeat in the burst changed the status: %q", statusOf(m))
	}

	// Expiry clears it, and a repeat after that is still the same burst.
	m.Update(expire)
	if strings.Contains(statusOf(m), "hook failed") {
		t.Fatalf("status after the expiry: %q", statusOf(m))
	}
	if hookFail(m, failFalse); strings.Contains(statusOf(m), "hook failed") {
		t.Fatalf("a repeat in the burst after the expiry shows: %q", statusOf(m))
	}

	// Another hook's burst shows; a stale expiry (of the first notice)
	// leaves it.
	if hookFail(m, failSlow) == nil {
		t.Fatal("no expiry tick for another hook's failure")
	}
	m.Update(expire)
	if !strings.Contains(statusOf(m), "hook failed: hooks[2] (slow.sh) on auto_retry_start") {
		t.Fatalf("status %q, want the second hook's failure", statusOf(m))
	}

	// The next prompt ends every burst and clears the line: the first
	// hook's next failure shows again.
	startRun(t, m, f, "again", "")
	if strings.Contains(statusOf(m), "hook failed") {
		t.Fatalf("status after the next prompt: %q", statusOf(m))
	}
	finish()
	hookFail(m, failFalse)
	if !strings.Contains(statusOf(m), shownFalse) {
		t.Fatalf("status %q, want the new burst's failure", statusOf(m))
	}

	// A session switch ends the bursts too.
	m.Update(sessionMsg{s: newFake(), what: "New session"})
	if strings.Contains(statusOf(m), "hook failed") {
		t.Fatalf("status after /new: %q", statusOf(m))
	}
	hookFail(m, failFalse)
	if !strings.Contains(statusOf(m), shownFalse) {
		t.Fatalf("status %q, want the failure in the new session", statusOf(m))
	}
}

// TestHookFailureWidths: the failure and the retry state always show; the
// session name, cost, context and model make room, in that order.
func TestHookFailureWidths(t *testing.T) {
	m, _ := testModel(t, Options{Info: Info{Model: llm.Model{Provider: "fake-llm", ID: "fake-model", ContextWindow: 128000}, SessionName: "refactor"}})
	hookFail(m, failFalse)
	for _, c := range []struct {
		width int
		want  string
	}{
		{160, " fake-llm/fake-model · ctx 0/128k · $0.0000 · idle · " + shownFalse},
		{110, " fake-llm/fake-model · ctx 0/128k · idle · " + shownFalse},
		{100, " fake-llm/fake-model · idle · " + shownFalse},
		{72, " idle · " + shownFalse},
		{40, "idle · hook failed: hooks[1] (false) on…"},
	} {
		t.Run(itoa(c.width), func(t *testing.T) {
			m.Update(tea.WindowSizeMsg{Width: c.width, Height: 20})
			if got := statusOf(m); got != c.want {
				t.Errorf("width %d: status\n%q, want\n%q", c.width, got, c.want)
			}
		})
	}
}
