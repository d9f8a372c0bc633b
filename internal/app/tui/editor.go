package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
)

// maxEditorRows is how tall the editor grows before it scrolls.
const maxEditorRows = 8

// editor is the multi-line prompt editor with history. Enter is handled
// by the model (send); Shift+Enter, Alt+Enter and Ctrl+J insert a newline.
type editor struct {
	ta    textarea.Model
	hist  []string
	pos   int    // index into hist while browsing; len(hist) is the draft
	draft string // what was typed before browsing
	hint  string // completion candidates
	cands func(string) []string
}

func newEditor(st styles) editor {
	ta := textarea.New()
	ta.Prompt = "> "
	ta.Placeholder = "Type a prompt, / for commands"
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = maxEditorRows
	ta.MaxContentHeight = 100000
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	if st.noColor {
		s := ta.Styles()
		plain := textarea.StyleState{}
		s.Focused, s.Blurred = plain, plain
		s.Cursor.Color = nil
		ta.SetStyles(s)
	} else {
		s := ta.Styles()
		s.Focused.CursorLine = s.Focused.Base
		ta.SetStyles(s)
	}
	ta.SetWidth(80)
	return editor{ta: ta}
}

func (e *editor) focus() tea.Cmd { return e.ta.Focus() }

func (e *editor) setWidth(w int) { e.ta.SetWidth(w) }

func (e *editor) value() string { return e.ta.Value() }

func (e *editor) reset() {
	e.ta.Reset()
	e.pos = len(e.hist)
	e.refreshHint()
}

func (e *editor) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	e.ta, cmd = e.ta.Update(msg)
	e.refreshHint()
	return cmd
}

func (e *editor) view() string { return e.ta.View() }

// push adds a sent entry to the history.
func (e *editor) push(s string) {
	if n := len(e.hist); n == 0 || e.hist[n-1] != s {
		e.hist = append(e.hist, s)
	}
	e.pos = len(e.hist)
}

func (e *editor) onFirstLine() bool { return e.ta.Line() == 0 }

func (e *editor) onLastLine() bool { return e.ta.Line() >= e.ta.LineCount()-1 }

// history moves through the sent entries: -1 older, +1 newer.
func (e *editor) history(dir int) {
	next := e.pos + dir
	if next < 0 || next > len(e.hist) {
		return
	}
	if e.pos == len(e.hist) {
		e.draft = e.ta.Value()
	}
	e.pos = next
	if next == len(e.hist) {
		e.ta.SetValue(e.draft)
	} else {
		e.ta.SetValue(e.hist[next])
	}
	e.refreshHint()
}

// complete replaces the input with the common prefix of the candidates,
// or the only one.
func (e *editor) complete(cands []string) {
	if len(cands) == 0 {
		return
	}
	p := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, p) {
			p = p[:len(p)-1]
		}
	}
	if len(cands) == 1 && !strings.HasSuffix(p, " ") && !strings.Contains(p, " ") {
		p += " "
	}
	if len(p) > len(e.ta.Value()) {
		e.ta.SetValue(p)
	}
	e.refreshHint()
}

func (e *editor) refreshHint() {
	e.hint = ""
	if e.cands == nil {
		return
	}
	if c := e.cands(e.ta.Value()); len(c) > 0 {
		e.hint = strings.Join(c, " ")
	}
}
