package session

import (
	"time"

	"github.com/rally-agent/rally/llm"
)

// PhaseKind names what a session is doing.
type PhaseKind string

// The phases of a session. An operation starts streaming (or compacting,
// for an explicit compaction) and moves between these until it settles
// back to idle.
const (
	PhaseIdle        PhaseKind = "idle"
	PhaseStreaming   PhaseKind = "streaming"    // a model call streams, or is about to
	PhaseRetryWait   PhaseKind = "retry_wait"   // waiting before a retry
	PhaseCompacting  PhaseKind = "compacting"   // summarising older messages
	PhaseToolRunning PhaseKind = "tool_running" // a tool call runs
)

// Phase is what the session is doing now, with what that kind knows: a UI
// draws its status from it instead of replaying the events.
type Phase struct {
	Kind PhaseKind
	// PhaseRetryWait: retry Attempt of MaxAttempts starts at Until, after
	// a failure saying Reason.
	Attempt, MaxAttempts int
	Until                time.Time
	Reason               string
	// PhaseCompacting: why it compacts.
	Compaction CompactionReason
	// PhaseToolRunning: the tool's name.
	Tool string
}

// retryWait is the retry announced and not yet begun: set before
// auto_retry_start is emitted, so a State read on that event sees it.
type retryWait struct {
	attempt, max int
	until        time.Time
	reason       string
}

// phaseLocked is the session's phase; the caller holds s.mu.
func (s *Session) phaseLocked() Phase {
	switch {
	case !s.running && !s.compacting:
		return Phase{Kind: PhaseIdle}
	case s.compacting || s.compactOp:
		return Phase{Kind: PhaseCompacting, Compaction: s.compactReason}
	case s.waiting != nil:
		w := s.waiting
		return Phase{Kind: PhaseRetryWait, Attempt: w.attempt, MaxAttempts: w.max, Until: w.until, Reason: w.reason}
	case s.tool != "":
		return Phase{Kind: PhaseToolRunning, Tool: s.tool}
	}
	return Phase{Kind: PhaseStreaming}
}

// endWait clears the announced retry: it began, or was cancelled.
func (s *Session) endWait() {
	s.mu.Lock()
	s.waiting = nil
	s.mu.Unlock()
}

// setTool records the running tool ("" when none runs).
func (s *Session) setTool(name string) {
	s.mu.Lock()
	s.tool = name
	s.mu.Unlock()
}

// usageLocked sums the working context's usage and estimates its size:
// the figures State and Stats share. The caller holds s.mu.
func (s *Session) usageLocked() (u llm.Usage, tokens int) {
	for i := range s.messages {
		m := &s.messages[i]
		if m.Role != llm.Assistant || m.Usage == nil {
			continue
		}
		u.Input += m.Usage.Input
		u.Output += m.Usage.Output
		u.CacheRead += m.Usage.CacheRead
		u.CacheWrite += m.Usage.CacheWrite
		u.TotalTokens += m.Usage.TotalTokens
		u.Cost.Total += m.Usage.Cost.Total
	}
	return u, contextTokens(s.messages)
}
