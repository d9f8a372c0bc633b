package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
)

// The completion hint is looked up after each edit, and not after a
// cursor key, which cannot change it: a lookup gets the whole text.
func TestEditorHintAfterEdits(t *testing.T) {
	e := newEditor(newStyles(true))
	lookups := 0
	e.cands = func(in string) []string {
		lookups++
		if strings.HasPrefix(in, "/m") {
			return []string{"/model"}
		}
		return nil
	}
	e.paste("/mx")
	if lookups != 1 || e.hint != "/model" {
		t.Fatalf("paste: %d lookups, hint %q", lookups, e.hint)
	}
	for _, c := range []struct {
		key     string
		lookups int
		hint    string
	}{
		{"left", 0, "/model"},
		{"backspace", 1, ""},
		{"m", 1, "/model"},
		{"end", 0, "/model"},
		{"alt+left", 0, "/model"},
		{"ctrl+home", 0, "/model"},
		{"backspace", 0, "/model"}, // at the start: nothing to erase
		{"delete", 1, ""},
	} {
		n := lookups
		e.key(edKey(t, c.key))
		if lookups-n != c.lookups || e.hint != c.hint {
			t.Fatalf("%s: %d lookups, hint %q; want %d, %q", c.key, lookups-n, e.hint, c.lookups, c.hint)
		}
	}
}

// A pasted tab is sent as pasted, and the transcript shows the prompt
// with each tab at the next stop of its line.
func TestEditorSendsTabs(t *testing.T) {
	m, f := testModel(t, Options{})
	prompt := "all:\n\tgo build\tx"
	m.Update(tea.PasteMsg{Content: prompt})
	run(m, press(m, "enter"))
	if len(f.prompts) != 1 || f.prompts[0] != prompt {
		t.Fatalf("sent %q, want %q", f.prompts, prompt)
	}
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(prompt)}}})
	want := "› all:\n        go build        x\n"
	if got := screen(m); !strings.Contains(got, want) {
		t.Fatalf("no %q in\n%s", want, got)
	}
}
