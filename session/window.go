package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Windows remembers the context windows that overflow errors stated, per
// provider, server (base URL) and model, where every process using the same models sees them:
// package window's File on one machine ($RALLY_HOME), package fleet's
// Windows across a fleet. The session asks it at the start of every prompt
// and tells it what an overflow says.
type Windows interface {
	// Window returns the window learned for provider's model at baseURL,
	// 0 if none. Every --base-url run is provider "custom": the server is
	// what tells one model's window from another's.
	Window(ctx context.Context, provider, baseURL, model string) (int, error)
	// Learn records that provider's model at baseURL takes at most tokens.
	Learn(ctx context.Context, provider, baseURL, model string, tokens int) error
}

// windowTimeout bounds one call to Config.Windows: a slow store costs a
// prompt this much at most, never a hang.
const windowTimeout = 2 * time.Second

type modelKey struct{ provider, baseURL, model string }

// effective is m with its context window as the session knows it: the
// configured or catalog window, or the learned one when that is smaller
// (or the only one). Callers hold s.mu.
func (s *Session) effective(m llm.Model) llm.Model {
	if w := s.learned[modelKey{m.Provider, m.BaseURL, m.ID}]; w > 0 && (m.ContextWindow <= 0 || w < m.ContextWindow) {
		m.ContextWindow = w
	}
	return m
}

// model is the model of the next call with its effective window.
func (s *Session) model() llm.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effective(s.target.Model)
}

// loadWindow reads what the store learned for the current model (another
// process may have learned it since the last prompt).
func (s *Session) loadWindow(ctx context.Context) {
	if s.cfg.Windows == nil {
		return
	}
	s.mu.Lock()
	m := s.target.Model
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, windowTimeout)
	defer cancel()
	n, err := s.cfg.Windows.Window(ctx, m.Provider, m.BaseURL, m.ID)
	if err != nil {
		s.logger().Warn("session: read learned context window", "provider", m.Provider, "model", m.ID, "err", err.Error())
		return
	}
	if n > 0 {
		s.mu.Lock()
		s.setLearned(modelKey{m.Provider, m.BaseURL, m.ID}, n)
		s.mu.Unlock()
	}
}

// setLearned records window n for k; s.mu is held. The map is made on the
// first: most sessions never learn one, and an empty map is 48 bytes of
// every idle session.
func (s *Session) setLearned(k modelKey, n int) {
	if s.learned == nil {
		s.learned = map[modelKey]int{}
	}
	s.learned[k] = n
}

// learn records the window an overflow of a call to m stated, in the
// session at once and in the store for every other process.
func (s *Session) learn(ctx context.Context, m llm.Model, rep retry.Report) {
	if rep.Window <= 0 {
		return
	}
	k := modelKey{m.Provider, m.BaseURL, m.ID}
	s.mu.Lock()
	old := s.learned[k]
	s.setLearned(k, rep.Window)
	s.mu.Unlock()
	if old == rep.Window {
		return
	}
	s.logger().Info("session: learned the context window from an overflow", "provider", m.Provider, "model", m.ID,
		"window", rep.Window, "configured", m.ContextWindow)
	if s.cfg.Windows == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), windowTimeout)
	defer cancel()
	if err := s.cfg.Windows.Learn(ctx, m.Provider, m.BaseURL, m.ID, rep.Window); err != nil {
		s.logger().Warn("session: record learned context window", "provider", m.Provider, "model", m.ID, "err", err.Error())
	}
}

// overhead is what every request carries besides its messages, by the
// one estimate: the system prompt and the tools' specs.
func (s *Session) overhead() int {
	chars := len(s.cfg.System)
	for _, t := range s.cfg.Tools {
		sp := t.Spec()
		chars += len(sp.Name) + len(sp.Description) + len(sp.Parameters) + 16
	}
	return (chars + 3) / 4
}

// need is the size of a request that sends ms: the larger of rally's
// estimate of all of it and what the provider counted for the last answer
// plus the estimate of what came after it (a proxy may report a count far
// too small to be true; a count larger than the estimate is the better
// figure). Estimates are scaled by what an overflow taught about how far
// the estimate falls short of the provider's own count. next (a prompt
// about to be sent) follows ms: passing it apart saves copying a long
// context to join them.
func (s *Session) need(ms []llm.Message, next ...llm.Message) int {
	if slices.ContainsFunc(next, func(m llm.Message) bool { return m.Usage != nil }) {
		ms, next = append(ms[:len(ms):len(ms)], next...), nil // an answer's count may apply
	}
	counted, whole, after := s.estimate(ms)
	more := llm.EstimateTokens(next)
	s.mu.Lock()
	scale := max(s.scale, 1)
	s.mu.Unlock()
	scaled := func(n int) int { return int(float64(n) * scale) }
	est := scaled(whole + more)
	if counted == 0 {
		return est
	}
	return max(est, counted+scaled(after+more))
}

// estimate sizes a request that sends ms: counted is what the provider
// counted for the last answer (0 if none applies), whole rally's unscaled
// estimate of the request (every message and the overhead) and after that
// of the messages after the counted answer.
func (s *Session) estimate(ms []llm.Message) (counted, whole, after int) {
	counted, rest := splitCounted(ms)
	after = llm.EstimateTokens(rest)
	whole = llm.EstimateTokens(ms[:len(ms)-len(rest)]) + after + s.overhead()
	return counted, whole, after
}

// calibrate learns from an overflow that states the request's size how
// much the estimate of what was sent falls short (tokenizers differ:
// code and non-English text take more than four characters a token). It
// compares the stated size with the estimate of the whole request, never
// with a part that an answer's count stands in for: that count may be
// wrong, and the scale would carry its error to every later estimate.
func (s *Session) calibrate(sent []llm.Message, rep retry.Report) {
	if rep.Requested <= 0 {
		return
	}
	_, whole, _ := s.estimate(sent)
	if whole <= 0 {
		return
	}
	scale := float64(rep.Requested) / float64(whole)
	scale = min(scale, 4) // a wild statement must not make every context look huge
	s.mu.Lock()
	if scale > s.scale {
		s.scale = scale
	}
	s.mu.Unlock()
}

// TooLargeError is the failure of a context that does not fit the window
// and that compaction cannot shrink enough: a prompt that alone exceeds
// it, or a context still too large after compacting twice. It names both
// numbers, and is ErrContextOverflow for errors.Is.
type TooLargeError struct {
	// Need is the request's size in tokens (the provider's count when it
	// stated one, else rally's estimate); Window is the context window.
	Need, Window int
	// Prompt reports that the prompt alone is too large.
	Prompt bool
	// Compacted reports that compaction ran and this is what remained.
	Compacted bool
}

func (e *TooLargeError) Error() string {
	switch {
	case e.Prompt:
		return fmt.Sprintf("session: context overflow: the prompt alone needs about %d tokens (with the system prompt and tools), more than the model's context window of %d tokens; shorten it or use a model with a larger window", e.Need, e.Window)
	case e.Compacted:
		return fmt.Sprintf("session: context overflow even after compaction: the context needs about %d tokens, more than the model's context window of %d tokens", e.Need, e.Window)
	}
	return fmt.Sprintf("session: context overflow: the context needs about %d tokens, more than the model's context window of %d tokens", e.Need, e.Window)
}

func (e *TooLargeError) Is(target error) bool {
	return target == ErrContextOverflow || e.Compacted && target == ErrStillOverflows
}
