package tui

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestTmuxForeignControls: an answer and a tool call carrying a window
// title, a clipboard write and a right-to-left override reach tmux with
// every control made visible; the pane keeps its title. Before, escape
// sequences were dropped by the screen renderer but U+202E passed, and
// the line read backwards.
func TestTmuxForeignControls(t *testing.T) {
	hostile := "title \x1b]0;pwned\x07 clip \x1b]52;c;cHduZWQ=\x07 bidi \u202eevil end"
	srv := llmtest.NewServer(t,
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "tool\u202eeman", Arguments: `{}`}}},
		llmtest.Step{Text: hostile})
	p := startRally(t, srv, 120, 30, "")
	p.typeLine("go")
	s := p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "evil end") && idle(s) })
	for _, want := range []string{"␛]0;pwned␇", "␛]52;c;cHduZWQ=␇", "<U+202E>evil", "tool<U+202E>eman"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\u202e") {
		t.Errorf("screen holds U+202E:\n%s", s)
	}
	if title := p.tmux("display-message", "-p", "-t", "rally", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("pane title %q: the answer set it", title)
	}
}
