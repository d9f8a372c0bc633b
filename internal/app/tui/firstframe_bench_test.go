package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
)

// BenchmarkFirstFrame is the UI's first frame of a resumed session whose
// answers hold Markdown and highlighted code: the model, the first
// window size, and a render that builds the Markdown renderer on first
// use (target: under 50 ms).
//
//	go test -run '^$' -bench FirstFrame -benchmem ./internal/app/tui
func BenchmarkFirstFrame(b *testing.B) {
	f := newFake()
	for i := range 10 {
		f.messages = append(f.messages,
			llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(fmt.Sprintf("question %d", i))}},
			llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(fmt.Sprintf(
				"## Step %d\n\nIt **parses** the header:\n\n```go\nfunc parse(b []byte) (int, error) { // %d\n\treturn len(b), nil\n}\n```\n\n- checks the `version`\n- reads the entries", i, i))}})
	}
	b.ReportAllocs()
	for b.Loop() {
		m := New(Options{Session: f})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		if m.render() == "" {
			b.Fatal("empty frame")
		}
	}
}
