package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
)

// bigSession is a transcript of n messages, half prompts, half Markdown
// answers.
func bigSession(n int) *fakeSession {
	f := newFake()
	for i := 0; i < n; i += 2 {
		f.messages = append(f.messages,
			llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(fmt.Sprintf("question %d: what does this function do?", i))}},
			llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(fmt.Sprintf(
				"Answer %d. It **parses** the header, then:\n\n- checks the `version`\n- reads the entries\n\nand returns the first error it meets.", i))}})
	}
	return f
}

// delta is the i-th delta of a long streamed answer: words, with a
// paragraph break every 100 deltas.
func delta(i int) string {
	if i%100 == 99 {
		return "end.\n\n"
	}
	return fmt.Sprintf("word%d ", i)
}

// BenchmarkKeystroke is one key press in the editor through Update and
// the frame it produces, with a 2,000-message transcript (target: under
// 16 ms, one frame at 60 Hz).
func BenchmarkKeystroke(b *testing.B) {
	m := New(Options{Session: bigSession(2000)})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.render()
	key := tea.KeyPressMsg{Code: 'a', Text: "a"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%200 == 0 {
			m.ed.reset()
		}
		m.Update(key)
		if m.render() == "" {
			b.Fatal("empty frame")
		}
	}
}

// BenchmarkStreamDelta is one streamed text delta through Update and the
// frame after it, with a 2,000-message transcript.
func BenchmarkStreamDelta(b *testing.B) {
	m := New(Options{Session: bigSession(2000)})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(eventMsg{msg: assistantStartMsg{}})
	var want strings.Builder
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d := delta(i)
		want.WriteString(d)
		m.Update(eventMsg{msg: deltaMsg{text: d}})
		m.render()
	}
	b.StopTimer()
	if got := m.tr.blocks[len(m.tr.blocks)-1].text; got != want.String() {
		b.Fatalf("streamed text lost: %d bytes shown, %d sent", len(got), want.Len())
	}
}

// BenchmarkProgramStream sends deltas through a real bubbletea program
// (rendering to io.Discard), as the session subscription does, and checks
// that every byte arrived. ns/op is the cost of one delta end to end.
func BenchmarkProgramStream(b *testing.B) {
	m := New(Options{Session: bigSession(2000)})
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(120, 40))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	p.Send(eventMsg{msg: assistantStartMsg{}})
	var want strings.Builder
	b.ResetTimer()
	for i := range b.N {
		d := delta(i)
		want.WriteString(d)
		p.Send(eventMsg{msg: deltaMsg{text: d}})
	}
	p.Quit()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := m.tr.blocks[len(m.tr.blocks)-1].text; got != want.String() {
		b.Fatalf("streamed text lost: %d bytes shown, %d sent", len(got), want.Len())
	}
}
