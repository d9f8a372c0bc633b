package session

import (
	"fmt"

	"github.com/rally-agent/rally/llm"
)

// Queue modes: how queued steering and follow-up messages are delivered
// (RPC set_steering_mode and set_follow_up_mode, with pi's names).
const (
	// OneAtATime delivers one queued message per completed turn (steering)
	// or per time the agent would stop (follow-up): the default.
	OneAtATime = "one-at-a-time"
	// AllAtOnce delivers every queued message at once.
	AllAtOnce = "all"
)

// modes is the session's delivery settings that clients change at run
// time, and the context it holds for the next prompt. Guarded by
// Session.mu.
type modes struct {
	steerAll, followUpAll bool
	// pending are messages that join the context with the next prompt:
	// the output of a user's own shell command (RPC bash), which pi's
	// clients expect to reach the model on the next prompt, not at once.
	pending []llm.Message
}

// SetThinking sets the reasoning level of the next model calls ("off",
// "minimal", "low", "medium", "high"; see llm.ThinkingLevels for what a
// model accepts). A call already streaming keeps its level.
func (s *Session) SetThinking(level string) {
	s.mu.Lock()
	s.cfg.Thinking = level
	s.mu.Unlock()
}

// SetSteeringMode chooses how steering messages are delivered: OneAtATime
// or AllAtOnce.
func (s *Session) SetSteeringMode(mode string) error {
	all, err := queueMode(mode)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.modes.steerAll = all
	s.mu.Unlock()
	return nil
}

// SetFollowUpMode chooses how follow-up messages are delivered: OneAtATime
// or AllAtOnce.
func (s *Session) SetFollowUpMode(mode string) error {
	all, err := queueMode(mode)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.modes.followUpAll = all
	s.mu.Unlock()
	return nil
}

func queueMode(mode string) (all bool, err error) {
	switch mode {
	case OneAtATime:
		return false, nil
	case AllAtOnce:
		return true, nil
	}
	return false, fmt.Errorf("session: queue mode must be %q or %q, got %q", OneAtATime, AllAtOnce, mode)
}

func modeName(all bool) string {
	if all {
		return AllAtOnce
	}
	return OneAtATime
}

// AddContext holds m (a user message) for the next prompt: it joins the
// context, and the session file, just before that prompt's own message.
// It is how the output of a command the user ran reaches the model.
func (s *Session) AddContext(m llm.Message) {
	s.mu.Lock()
	s.modes.pending = append(s.modes.pending, m)
	s.mu.Unlock()
}

// takePending hands over what AddContext held, for the prompt starting now.
func (s *Session) takePending(prompt []llm.Message) []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.modes.pending) == 0 {
		return prompt
	}
	out := append(s.modes.pending, prompt...)
	s.modes.pending = nil
	return out
}

// take hands over the queued messages q delivers now: all of them, or
// the first. Called with s.mu held.
func take(q *[]llm.Message, all bool) []llm.Message {
	if len(*q) == 0 {
		return nil
	}
	if all {
		out := *q
		*q = nil
		return out
	}
	out := (*q)[:1:1]
	*q = (*q)[1:]
	return out
}
