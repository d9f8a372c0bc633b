package tui

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestTmuxCodeHighlighted: in a real terminal, with colour on, an
// answer's code block is drawn highlighted (the keyword and the comment
// in colours of their own) and its Markdown is rendered, through the
// renderer the UI builds on its first answer.
func TestTmuxCodeHighlighted(t *testing.T) {
	answer := "Here is **the** code:\n\n```go\nfunc main() { // greet\n\treturn\n}\n```\n"
	srv := llmtest.NewServer(t, llmtest.Step{Text: answer})
	p := startRallyEnv(t, t.TempDir(), []string{"NO_COLOR=", "TERM=xterm-256color"}, srv, 100, 30, "", "show code")
	p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "// greet") && idle(s) })
	out := p.tmux("capture-pane", "-e", "-p", "-t", "rally")
	if strings.Contains(out, "```") || strings.Contains(out, "**the**") {
		t.Fatalf("Markdown not rendered:\n%s", out)
	}
	kw, cm := sgrBefore(out, "func"), sgrBefore(out, "// greet")
	if !colourSGR.MatchString(kw) || !colourSGR.MatchString(cm) || kw == cm {
		t.Fatalf("keyword styled %q, comment %q: not highlighted in\n%q", kw, cm, out)
	}
}
