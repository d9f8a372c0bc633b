package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rally-agent/rally/llm"
)

// sgrBefore matches the escape sequence that styles word (the last one
// before it).
func sgrBefore(out, word string) string {
	m := regexp.MustCompile(`(\x1b\[[0-9;]*m)` + regexp.QuoteMeta(word)).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestCodeBlockHighlighted: a finished answer's Go code block shows
// without its fences, its keyword and its comment each in a colour of
// their own; under NO_COLOR the same code shows with no escape at all.
func TestCodeBlockHighlighted(t *testing.T) {
	answer := "Like this:\n\n```go\nfunc main() { // say hi\n\tprintln(\"hi\")\n}\n```\n"
	for _, noColor := range []bool{false, true} {
		t.Run(map[bool]string{false: "colour", true: "no colour"}[noColor], func(t *testing.T) {
			f := newFake()
			f.messages = []llm.Message{
				{Role: llm.User, Content: []llm.Content{llm.Text("show me")}},
				{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(answer)}},
			}
			m := New(Options{Session: f, NoColor: noColor})
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
			out := m.render()
			plain := ansi.Strip(out)
			if strings.Contains(plain, "```") || !strings.Contains(plain, "func main() { // say hi") {
				t.Fatalf("code block not rendered:\n%s", plain)
			}
			if noColor {
				if colourSGR.MatchString(out) {
					t.Fatalf("colour under NO_COLOR: %q", out)
				}
				return
			}
			kw, cm := sgrBefore(out, "func"), sgrBefore(out, "// say hi")
			if !colourSGR.MatchString(kw) || !colourSGR.MatchString(cm) || kw == cm {
				t.Fatalf("keyword styled %q, comment %q: not highlighted in %q", kw, cm, out)
			}
		})
	}
}
