package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestKeys(t *testing.T) {
	t.Run("ctrl+c clears, twice quits", func(t *testing.T) {
		m, _ := testModel(t, Options{})
		typeText(m, "draft")
		if cmd := press(m, "ctrl+c"); cmd != nil || m.ed.value() != "" {
			t.Fatalf("ctrl+c did not just clear: %q", m.ed.value())
		}
		if cmd := press(m, "ctrl+c"); cmd != nil {
			t.Fatal("one ctrl+c on an empty editor quit")
		}
		if !strings.Contains(screen(m), "Press ctrl+c again to quit") {
			t.Fatalf("no hint:\n%s", screen(m))
		}
		if !isQuit(press(m, "ctrl+c")) {
			t.Fatal("the second ctrl+c did not quit")
		}
	})
	t.Run("ctrl+c, a key, ctrl+c does not quit", func(t *testing.T) {
		m, _ := testModel(t, Options{})
		press(m, "ctrl+c")
		press(m, "x")
		press(m, "ctrl+c") // clears "x"
		if isQuit(press(m, "ctrl+c")) {
			t.Fatal("quit on non-consecutive ctrl+c")
		}
	})
	t.Run("ctrl+d", func(t *testing.T) {
		m, _ := testModel(t, Options{})
		typeText(m, "x")
		if isQuit(press(m, "ctrl+d")) {
			t.Fatal("ctrl+d quit with text in the editor")
		}
		press(m, "ctrl+c")
		if !isQuit(press(m, "ctrl+d")) {
			t.Fatal("ctrl+d on an empty editor did not quit")
		}
	})
	t.Run("quitting aborts the run", func(t *testing.T) {
		m, f := testModel(t, Options{})
		startRun(t, m, f, "hi", "")
		press(m, "ctrl+c")
		if !isQuit(press(m, "ctrl+c")) || f.aborts != 1 {
			t.Fatalf("quit while running: aborts %d", f.aborts)
		}
	})
	t.Run("multi-line and history", func(t *testing.T) {
		m, f := testModel(t, Options{})
		typeText(m, "line one")
		press(m, "alt+enter")
		typeText(m, "line two")
		if m.ed.value() != "line one\nline two" {
			t.Fatalf("editor %q", m.ed.value())
		}
		run(m, press(m, "enter"))
		ev(m, settledMsg{})
		typeText(m, "second")
		run(m, press(m, "enter"))
		ev(m, settledMsg{})
		if strings.Join(f.prompts, "|") != "line one\nline two|second" {
			t.Fatalf("prompts %q", f.prompts)
		}
		typeText(m, "draft")
		press(m, "up")
		if m.ed.value() != "second" {
			t.Fatalf("up: %q", m.ed.value())
		}
		press(m, "up")
		if m.ed.value() != "line one\nline two" {
			t.Fatalf("up twice: %q", m.ed.value())
		}
		press(m, "down", "down")
		if m.ed.value() != "draft" {
			t.Fatalf("down back to the draft: %q", m.ed.value())
		}
	})
	t.Run("large paste", func(t *testing.T) {
		m, _ := testModel(t, Options{})
		big := strings.Repeat("0123456789 abcdefghij\n", 2000)
		m.Update(tea.PasteMsg{Content: big})
		if m.ed.value() != big {
			t.Fatalf("paste kept %d of %d bytes", len(m.ed.value()), len(big))
		}
	})
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestQueue(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "first", "")
	typeText(m, "second")
	press(m, "enter")
	typeText(m, "third")
	press(m, "enter")
	if got := screen(m); !strings.Contains(got, "queued: second") || !strings.Contains(got, "queued: third") {
		t.Fatalf("queue not shown:\n%s", got)
	}
	if len(f.prompts) != 1 {
		t.Fatalf("a queued prompt was sent while running: %q", f.prompts)
	}
	// The run settles: the next queued prompt goes.
	cmd := ev(m, settledMsg{})
	run(m, cmd)
	if strings.Join(f.prompts, "|") != "first|second" {
		t.Fatalf("prompts %q", f.prompts)
	}
	run(m, ev(m, settledMsg{}))
	if strings.Join(f.prompts, "|") != "first|second|third" || strings.Contains(screen(m), "queued:") {
		t.Fatalf("prompts %q\n%s", f.prompts, screen(m))
	}
}

func TestFirstPrompt(t *testing.T) {
	m, f := testModel(t, Options{FirstPrompt: "What does rally do?"})
	run(m, m.Init())
	if len(f.prompts) != 1 || f.prompts[0] != "What does rally do?" {
		t.Fatalf("prompts %q", f.prompts)
	}
}

func TestSlashCommands(t *testing.T) {
	m, f := testModel(t, Options{})
	typeText(m, "/retry off")
	press(m, "enter")
	if f.AutoRetryEnabled() || !strings.Contains(screen(m), "Auto-retry is off") || !strings.HasSuffix(statusOf(m), "retry off") {
		t.Fatalf("/retry off:\n%s", screen(m))
	}
	typeText(m, "/retry on")
	press(m, "enter")
	if !f.AutoRetryEnabled() || !strings.HasSuffix(statusOf(m), "idle") {
		t.Fatalf("/retry on:\n%s", screen(m))
	}
	f.sessionFile = "/tmp/s.jsonl"
	typeText(m, "/session")
	run(m, press(m, "enter"))
	if s := screen(m); !strings.Contains(s, "Session file: /tmp/s.jsonl") || !strings.Contains(s, "Retries so far: 0") {
		t.Fatalf("/session:\n%s", s)
	}
	typeText(m, "/bogus")
	press(m, "enter")
	if !strings.Contains(screen(m), "unknown command /bogus") {
		t.Fatalf("/bogus:\n%s", screen(m))
	}
	if len(f.prompts) != 0 {
		t.Fatalf("a slash command reached the model: %q", f.prompts)
	}
	// Completion.
	typeText(m, "/se")
	if !strings.Contains(screen(m), "/settings /session") {
		t.Fatalf("no candidates shown:\n%s", screen(m))
	}
	press(m, "tab")
	if m.ed.value() != "/se" {
		t.Fatalf("tab with two candidates: %q", m.ed.value())
	}
	typeText(m, "ss")
	press(m, "tab")
	if m.ed.value() != "/session " {
		t.Fatalf("tab completed to %q", m.ed.value())
	}
	press(m, "ctrl+c")
	typeText(m, "/retry o")
	if got := m.candidates(m.ed.value()); strings.Join(got, ",") != "/retry on,/retry off" {
		t.Fatalf("candidates %q", got)
	}
}
