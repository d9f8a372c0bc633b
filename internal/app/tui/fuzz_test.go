package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/internal/termsafe"
)

// FuzzStreamWrap streams any text in any chunking at any width: the view
// never panics, and the incrementally wrapped lines equal a full wrap.
func FuzzStreamWrap(f *testing.F) {
	f.Add("Streaming text arrives in small pieces,\nsome mid-word.", 20, 7)
	f.Add("a verylongunbreakablewordthatexceedsthewidth\n\n\tx", 10, 1)
	f.Add("日本語のテキストも折り返す。\r\n絵文字 🎉 も", 7, 3)
	f.Fuzz(func(t *testing.T, text string, width, chunk int) {
		if !utf8.ValidString(text) || width < 1 || width > 300 || chunk < 1 || len(text) > 4000 {
			t.Skip()
		}
		m := New(Options{Session: newFake(), NoColor: true})
		m.Update(tea.WindowSizeMsg{Width: width, Height: 10})
		m.Update(eventMsg{msg: assistantStartMsg{}})
		for i := 0; i < len(text); {
			j := min(i+chunk, len(text))
			for j < len(text) && !utf8.RuneStart(text[j]) {
				j++
			}
			m.Update(eventMsg{msg: deltaMsg{text: text[i:j]}})
			m.render()
			i = j
		}
		if len(m.tr.blocks) < 2 {
			return // nothing streamed (empty text)
		}
		b := &m.tr.blocks[len(m.tr.blocks)-1]
		// Controls show as visible stand-ins, whatever the chunking.
		text = termsafe.String(text)
		if b.text != text {
			t.Fatalf("text %q, streamed %q", b.text, text)
		}
		got, want := b.lines, strings.Split(wrap(text, b.width), "\n")
		if len(got) != len(want) {
			t.Fatalf("incremental %q, full %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d: incremental %q, full %q", i, got[i], want[i])
			}
		}
	})
}
