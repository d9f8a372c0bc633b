package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
)

// resumedMsg: a dropped stream was continued where it stopped
// (stream_resumed); the message being streamed goes on.
type resumedMsg struct{ attempt int }

// resumedFor is how long the status line says the stream was resumed.
const resumedFor = 5 * time.Second

// resumed shows "reconnected, resuming (n/max)" in the status line, where
// a wait shows, and leaves the transcript alone: the text streamed before
// the drop stays as drawn and the rest is appended to it.
func (m *Model) resumed(msg resumedMsg) tea.Cmd {
	text := fmt.Sprintf("reconnected, resuming (%d)", msg.attempt)
	if l := m.loader; l != nil && l.max > 0 {
		text = fmt.Sprintf("reconnected, resuming (%d/%d)", msg.attempt, l.max)
	}
	return m.waiting(waitMsg{text: text, d: resumedFor})
}
