package tui

import (
	"context"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Session is what the UI needs from a session; *session.Session has it.
// Every method but Prompt and Compact returns at once, so Update may call
// them; Prompt and Compact run in commands.
type Session interface {
	Prompt(ctx context.Context, text string, opts session.PromptOptions) error
	Compact(ctx context.Context) (*session.CompactionResult, error)
	Abort()
	AbortRetry()
	SetAutoRetryEnabled(on bool)
	AutoRetryEnabled() bool
	// FollowUp queues a message for the running prompt; ClearQueue takes
	// back what its run ended without delivering.
	FollowUp(m llm.Message)
	ClearQueue() (steering, followUp []llm.Message)
	State() session.State
	Messages() []llm.Message
}

// Host does what outlives one session: fresh and resumed sessions, the
// model list, switching models and describing the settings. The CLI
// implements it; a nil Host turns those slash commands off.
type Host interface {
	NewSession(ctx context.Context) (Session, error)
	OpenSession(ctx context.Context, path string) (Session, error)
	Sessions() ([]SessionInfo, error)
	Models() []llm.Model
	SetModel(ctx context.Context, s Session, m llm.Model) error
	// Settings describes the settings files in use and the effective
	// retry settings, one line each.
	Settings() []string
}

// SessionInfo describes a stored session for /resume.
type SessionInfo struct {
	Path        string
	FirstPrompt string
	Modified    time.Time
	Messages    int
}

// The messages below are the UI's own; events.go makes them from session
// events. gen is the session generation that sent them: after /new or
// /resume the old session's late events are dropped.

type runStartMsg struct{}

// settledMsg ends an operation; err is its result (agent_settled's).
type settledMsg struct{ err error }

type assistantStartMsg struct{}

type deltaMsg struct {
	text     string
	thinking bool
}

type messageEndMsg struct{ msg llm.Message }

type discardMsg struct{}

type toolStartMsg struct{ id, name, args string }

type toolEndMsg struct {
	id, name, result string
	isError          bool
}

type retryStartMsg struct {
	attempt, max int
	// at is when the event arrived and until when the wait ends.
	at, until         time.Time
	err               string
	class, switchedTo string
	// reset: a wait for a usage limit's reset (wait.go).
	reset bool
}

type retryEndMsg struct {
	success    bool
	attempt    int
	finalError string
	cancelled  bool // by AbortRetry or Abort
}

type compactStartMsg struct{ reason string }

// changedMsg is an event of a kind the UI does not know: it shows it
// through the session's state, which the model reads after every event.
type changedMsg struct{}

type compactEndMsg struct {
	reason       string
	tokensBefore int
	done         bool // a summary was made
	aborted      bool
}

// storeErrorMsg: the session file could not be written (session_error).
type storeErrorMsg struct{ op, err string }

// eventMsg wraps a translated session event with its generation.
type eventMsg struct {
	gen int
	msg any
}

// promptDoneMsg is a prompt's (or compaction's) return.
type promptDoneMsg struct {
	gen int
	err error
}

// tickMsg drives the retry countdown.
type tickMsg struct {
	seq int
	at  time.Time
}

// confirmMsg asks whether a tool may run; the answer goes on reply.
type confirmMsg struct {
	name, args string
	reply      chan<- bool
}

// infoMsg adds lines to the transcript (slash command output).
type infoMsg struct {
	lines []string
	err   error
}

// sessionMsg replaces the session (/new, /resume). The command that
// opened it read its state and messages, so Update need not.
type sessionMsg struct {
	s    Session
	st   session.State
	msgs []llm.Message
	err  error
	what string
}

// stateMsg is the session's state, read after a switch.
type stateMsg struct {
	gen, seq int
	st       session.State
}

// modelMsg reports a /model switch.
type modelMsg struct {
	m   llm.Model
	err error
}

// panicMsg reports a panic outside bubbletea's own goroutines.
type panicMsg struct{ v any }
