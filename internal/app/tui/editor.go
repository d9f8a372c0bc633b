package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// maxEditorRows is how tall the editor grows before it scrolls.
const maxEditorRows = 8

const (
	editorPrompt      = "> "
	editorPlaceholder = "Type a prompt, / for commands"
)

// editor is the multi-line prompt editor with history. Enter is handled
// by the model (send); Shift+Enter, Alt+Enter and Ctrl+J insert a newline.
type editor struct {
	te    textEdit
	st    editStyles
	hist  []string
	pos   int    // index into hist while browsing; len(hist) is the draft
	draft string // what was typed before browsing
	hint  string // completion candidates
	cands func(string) []string
}

func newEditor(st styles) editor {
	e := editor{st: newEditStyles(st.noColor)}
	e.setWidth(80)
	return e
}

func (e *editor) setWidth(w int) { e.te.setWidth(w - len(editorPrompt)) }

func (e *editor) value() string { return e.te.value() }

func (e *editor) reset() {
	e.te.setValue("")
	e.pos = len(e.hist)
	e.refreshHint()
}

// key applies a key press and paste a paste. Neither has a command to
// return: the cursor does not blink.
func (e *editor) key(k tea.KeyPressMsg) {
	n := e.te.edits
	e.te.key(k)
	if e.te.edits != n { // a cursor key keeps the hint, which reads the whole text
		e.refreshHint()
	}
}

func (e *editor) paste(text string) {
	e.te.insert(text)
	e.refreshHint()
}

func (e *editor) view() string { return e.te.view(e.st, editorPrompt, editorPlaceholder) }

// push adds a sent entry to the history.
func (e *editor) push(s string) {
	if n := len(e.hist); n == 0 || e.hist[n-1] != s {
		e.hist = append(e.hist, s)
	}
	e.pos = len(e.hist)
}

// onFirstLine and onLastLine are by display row, so Up and Down walk a
// wrapped paragraph row by row before they reach the history.
func (e *editor) onFirstLine() bool { return e.te.onFirstRow() }

func (e *editor) onLastLine() bool { return e.te.onLastRow() }

// history moves through the sent entries: -1 older, +1 newer.
func (e *editor) history(dir int) {
	next := e.pos + dir
	if next < 0 || next > len(e.hist) {
		return
	}
	if e.pos == len(e.hist) {
		e.draft = e.te.value()
	}
	e.pos = next
	if next == len(e.hist) {
		e.te.setValue(e.draft)
	} else {
		e.te.setValue(e.hist[next])
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
	if len(p) > len(e.te.value()) {
		e.te.setValue(p)
	}
	e.refreshHint()
}

func (e *editor) refreshHint() {
	e.hint = ""
	if e.cands == nil {
		return
	}
	if c := e.cands(e.te.value()); len(c) > 0 {
		e.hint = strings.Join(c, " ")
	}
}
