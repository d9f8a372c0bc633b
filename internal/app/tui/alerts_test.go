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

// TestAlertsNotices: notices said before the UI starts open its
// transcript, those said while it runs reach Update as messages (never
// the terminal), and after it ends Notice refuses them so that the CLI
// can print them instead.
func TestAlertsNotices(t *testing.T) {
	var a Alerts
	if !a.Notice("using fallback openai/gpt-4.1") {
		t.Fatal("a notice before the UI started was refused")
	}
	if a.Waiting("fleet: waiting 2s", 2*time.Second) {
		t.Fatal("a wait before the UI started was taken")
	}
	var sent []any
	pending := a.start(func(msg any) { sent = append(sent, msg) })
	if len(pending) != 1 || pending[0] != "using fallback openai/gpt-4.1" {
		t.Fatalf("pending %q", pending)
	}
	a.Notice("fleet: redis is not answering")
	a.Waiting("fleet: waiting 2s", 2*time.Second)
	if len(sent) != 2 || sent[0] != (noticeMsg{"fleet: redis is not answering"}) || sent[1] != (waitMsg{"fleet: waiting 2s", 2 * time.Second}) {
		t.Fatalf("sent %v", sent)
	}
	a.end()
	if a.Notice("after the end") || a.Waiting("after", time.Second) || len(sent) != 2 {
		t.Fatalf("a notice after the UI ended was taken: %v", sent)
	}
}

// TestNoticeAndWait: a notice is a transcript line; a wait shows in the
// status line, beside a hook failure, until its expiry.
func TestNoticeAndWait(t *testing.T) {
	m, _ := testModel(t, Options{})
	m.Update(noticeMsg{"every credential of acme is blocked; using fallback openai/gpt-4.1"})
	if !strings.Contains(screen(m), "every credential of acme is blocked; using fallback openai/gpt-4.1") {
		t.Fatalf("no notice in the transcript:\n%s", screen(m))
	}
	const w = "fleet: waiting 2s: request budget of acme is spent for now"
	_, tick := m.Update(waitMsg{text: w, d: 10 * time.Millisecond})
	if tick == nil {
		t.Fatal("no expiry for the wait")
	}
	if !strings.Contains(statusOf(m), w) || strings.Count(screen(m), "fleet:") != 1 {
		t.Fatalf("status %q, want the wait there and only there:\n%s", statusOf(m), screen(m))
	}
	hookFail(m, failFalse)
	if s := statusOf(m); !strings.Contains(s, w) || !strings.Contains(s, "hook failed") {
		t.Fatalf("status %q, want both the wait and the hook failure", s)
	}
	m.Update(tick())
	if strings.Contains(statusOf(m), "fleet:") {
		t.Fatalf("the wait outlived its expiry: %q", statusOf(m))
	}
}

// TestAlertsDrain: the notices of a UI that never started are handed
// back, to be printed.
func TestAlertsDrain(t *testing.T) {
	var a Alerts
	a.Notice("rally: warning: unknown key retry.maxRetires")
	if got := a.Drain(); len(got) != 1 || got[0] != "rally: warning: unknown key retry.maxRetires" {
		t.Fatalf("drained %q", got)
	}
	if a.Notice("later") {
		t.Fatal("a notice after Drain was taken")
	}
}
