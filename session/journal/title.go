package journal

import (
	"strings"

	"github.com/rally-agent/rally/llm"
)

// FirstPrompt is the text of the session's first user prompt, for lists
// of sessions (rally sessions, the UI's /resume): the first user message
// entry of the file. Messages cannot answer it: after a compaction the
// context starts with the summary, which no user typed.
func (l *Loaded) FirstPrompt() string {
	for i := range l.Entries {
		m := l.Entries[i].Message
		if l.Entries[i].Type != "message" || m == nil || m.Role != llm.User {
			continue
		}
		if t := m.TextOf(); strings.TrimSpace(t) != "" {
			return t
		}
	}
	return ""
}
