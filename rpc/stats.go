package rpc

import (
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// state is get_state's data.
func (s *server) state(sess *session.Session) State {
	st := sess.State()
	s.mu.Lock()
	id := s.sessID
	s.mu.Unlock()
	if st.SessionID != "" {
		id = st.SessionID
	}
	thinking := st.Thinking
	if thinking == "" {
		thinking = "off"
	}
	model := st.Model
	return State{
		Model:                 &model,
		ThinkingLevel:         thinking,
		IsStreaming:           st.Streaming,
		IsCompacting:          st.Compacting,
		SteeringMode:          OneAtATime,
		FollowUpMode:          OneAtATime,
		SessionFile:           st.SessionFile,
		SessionID:             id,
		SessionName:           st.Name,
		AutoCompactionEnabled: st.AutoCompaction,
		MessageCount:          st.MessageCount,
		PendingMessageCount:   st.PendingCount,
		AutoRetryEnabled:      st.AutoRetryEnabled,
		IsRetrying:            st.Retrying,
		RetryAttempt:          st.RetryAttempt,
	}
}

// stats is get_session_stats' data.
func (s *server) stats(sess *session.Session) SessionStats {
	st := sess.Stats()
	state := s.state(sess)
	t := st.Tokens
	out := SessionStats{
		SessionFile:       state.SessionFile,
		SessionID:         state.SessionID,
		UserMessages:      st.UserMessages,
		AssistantMessages: st.AssistantMessages,
		ToolCalls:         st.ToolCalls,
		ToolResults:       st.ToolResults,
		TotalMessages:     st.TotalMessages,
		Tokens: Tokens{Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite,
			Total: t.Input + t.Output + t.CacheRead + t.CacheWrite},
		Cost: st.Cost,
	}
	if w := state.Model.ContextWindow; w > 0 {
		n := contextTokens(sess.Messages())
		out.ContextUsage = &ContextUsage{Tokens: n, ContextWindow: w, Percent: float64(n) / float64(w) * 100}
	}
	return out
}

// contextTokens estimates the size of the context: the usage the provider
// reported for the last good answer, plus about a token per four
// characters of what came after it.
func contextTokens(msgs []llm.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role == llm.Assistant && m.Usage != nil && m.StopReason != llm.Error && m.StopReason != llm.Aborted {
			u := m.Usage
			used := u.TotalTokens
			if used == 0 {
				used = u.Input + u.Output + u.CacheRead + u.CacheWrite
			}
			if used > 0 {
				return used + n
			}
		}
		n += estimateTokens(m)
	}
	return n
}

// imageTokens is what one image is assumed to cost.
const imageTokens = 1200

func estimateTokens(m *llm.Message) int {
	chars, images := 0, 0
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			chars += len(c.Text)
		case llm.ThinkingType:
			chars += len(c.Thinking)
		case llm.ToolCallType:
			chars += len(c.Name) + len(c.Arguments)
		case llm.ImageType:
			images++
		}
	}
	return (chars+3)/4 + images*imageTokens
}
