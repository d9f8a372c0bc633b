package session

import (
	"context"
	"errors"

	"github.com/rally-agent/rally/llm"
)

// SetModel moves the session to t (a client and its model, and the Ref of
// its credential when a Switcher handed it out) for the next model call; a
// call already streaming finishes on the old one.
func (s *Session) SetModel(t llm.Target) {
	m := t.Model
	s.mu.Lock()
	s.target = t
	s.mu.Unlock()
	s.loadWindow(context.Background())
	if j := s.cfg.Store; j != nil {
		if err := j.AppendModelChange(m.Provider, m.ID); err != nil {
			s.storeFailed(OpSaveModelChange, err)
		}
	}
}

// SetName names the session (and records it in the Store).
func (s *Session) SetName(name string) error {
	if name == "" {
		return errors.New("session: empty name")
	}
	if j := s.cfg.Store; j != nil {
		if err := j.SetName(name); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.name = name
	s.mu.Unlock()
	return nil
}

// SetAutoCompactionEnabled turns automatic compaction on or off.
func (s *Session) SetAutoCompactionEnabled(on bool) {
	s.mu.Lock()
	s.autoCompact = on
	s.mu.Unlock()
}

// Stats are the counts and totals of a session (RPC get_session_stats).
type Stats struct {
	UserMessages      int
	AssistantMessages int
	ToolCalls         int
	ToolResults       int
	TotalMessages     int
	Tokens            llm.Usage
	Cost              float64
	// ContextTokens is the size of the working context in tokens: the last
	// answer's reported usage plus an estimate of what came after, the
	// same measure compaction uses.
	ContextTokens int
}

// Stats counts the working context's messages and sums its usage.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Stats
	for i := range s.messages {
		m := &s.messages[i]
		switch m.Role {
		case llm.User:
			st.UserMessages++
		case llm.Assistant:
			st.AssistantMessages++
			st.ToolCalls += len(m.ToolCalls())
		case llm.ToolResult:
			st.ToolResults++
		}
	}
	st.TotalMessages = len(s.messages)
	st.Tokens, st.ContextTokens = s.usageLocked()
	st.Cost = st.Tokens.Cost.Total
	return st
}
