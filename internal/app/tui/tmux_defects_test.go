package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// The TUI defects of issue 22 (item 11), each in a real terminal.

// TestTmuxHelp: /help lists the commands, one line each.
func TestTmuxHelp(t *testing.T) {
	p := startRally(t, llmtest.NewServer(t), 100, 30, "")
	p.typeLine("/help")
	s := p.waitText("/quit leave rally")
	lines := strings.Split(s, "\n")
	for _, want := range []string{"/retry on|off: automatic retry of failed model calls", "/compact summarise the older messages now", "/help this list"} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("no line %q in\n%s", want, s)
		}
	}
}

// TestTmuxStreamingStatus: the status line says streaming while an answer
// streams, and idle once it is done.
func TestTmuxStreamingStatus(t *testing.T) {
	slow := llmtest.Step{Text: "Streaming slowly so that the status line is read in the middle of this answer.", Chunks: 12, Delay: 200 * time.Millisecond}
	p := startRally(t, llmtest.NewServer(t, slow), 100, 30, "")
	p.typeLine("go")
	p.waitFor("a streaming status", func(s string) bool {
		return strings.Contains(s, "Streaming slowly") && strings.Contains(s, "· streaming")
	})
	p.waitFor("the end of the answer", func(s string) bool { return strings.Contains(s, "of this answer.") && idle(s) })
}

// TestTmuxNarrowLoader: at 30 columns the retry loader still says, whole,
// how to cancel.
func TestTmuxNarrowLoader(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Status: 503}, llmtest.Step{Text: "ok"})
	p := startRally(t, srv, 30, 20, `{"retry": {"baseDelayMs": 5000}}`)
	p.typeLine("go")
	s := p.waitText("in 5s")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "in 5s") && !strings.HasSuffix(l, "esc to cancel") {
			t.Errorf("loader line %q does not end with esc to cancel:\n%s", l, s)
		}
	}
	p.keys("Escape")
	p.waitText("Retry cancelled")
}

// TestTmuxScrollback: after quitting, the conversation is on the normal
// screen (and so in the terminal's scrollback), not gone with the UI.
func TestTmuxScrollback(t *testing.T) {
	p := startRally(t, llmtest.NewServer(t, llmtest.Step{Text: "The answer that must outlive the UI."}), 100, 30, "")
	p.typeLine("What does rally do?")
	p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "outlive the UI.") && idle(s) })
	p.keys("C-d")
	p.waitExit()
	all := p.tmux("capture-pane", "-p", "-S", "-", "-t", "rally")
	if !strings.Contains(all, "› What does rally do?") || !strings.Contains(all, "The answer that must outlive the UI.") {
		t.Errorf("the conversation is not in the terminal after quitting:\n%s", all)
	}
}

// TestTmuxToolOutputTabs: a tool's multi-line output keeps its lines and
// its tab stops (columns stay aligned as in a terminal).
func TestTmuxToolOutputTabs(t *testing.T) {
	p := startRally(t, nil, 100, 30, "", "--provider", "sim", "--model", "sim-tiny")
	p.typeLine(`run printf "name\tsize\nfoo.go\t12\n" ok`)
	s := p.waitFor("the tool's output", func(s string) bool { return strings.Contains(s, "foo.go") && idle(s) })
	for _, want := range []string{"\n  name    size\n", "\n  foo.go  12\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}
