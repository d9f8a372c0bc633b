package rpc

import "github.com/rally-agent/rally/session"

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
		SteeringMode:          st.SteeringMode,
		FollowUpMode:          st.FollowUpMode,
		SessionFile:           st.SessionFile,
		SessionID:             id,
		SessionName:           st.Name,
		AutoCompactionEnabled: st.AutoCompaction,
		MessageCount:          st.MessageCount,
		PendingMessageCount:   st.PendingCount,
		AutoRetryEnabled:      st.AutoRetryEnabled,
		IsRetrying:            st.Retrying,
		RetryAttempt:          st.RetryAttempt,
		LoadWarnings:          st.LoadWarnings,
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
		n := st.ContextTokens
		out.ContextUsage = &ContextUsage{Tokens: n, ContextWindow: w, Percent: float64(n) / float64(w) * 100}
	}
	return out
}
