// Package session runs prompts through the agent loop and owns everything
// that outlives one model call: the retry lifecycle, the
// compaction boundary, persistence (through a Store, such as a
// session/journal file) and the typed session events. It is what a Go
// program embeds:
//
//	s, err := session.New(session.Config{Provider: &sim.Model{}, Model: sim.Info()})
//	unsubscribe := s.Subscribe(func(e session.Event) {
//		if r, ok := e.(session.AutoRetryStartEvent); ok { … r.Attempt, r.DelayMs … }
//	})
//	err = s.Prompt(ctx, "What does rally do?", session.PromptOptions{})
//	unsubscribe() // every event of the run has been delivered
//
// A failure is read once (Config.Classify, by default retry.Inspect),
// decided by the retry.Policy, switched through the Switcher when the
// policy wants it, announced (auto_retry_start) and waited out. One
// operation runs at a time: Start accepts a prompt or refuses it at once,
// the returned Run settles after its agent_settled event.
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// Switcher rotates credentials and fallback models on a usage limit or a
// wait too long to sit out (package auth's Rotation is one; it needs
// nothing of this package).
type Switcher interface {
	// Switch is asked when the policy wants a switch, before anything is
	// changed. from is what the failed call used (its Ref as the Switcher
	// handed it out, "" for a client it did not); failure is that call's
	// report. On a usage limit the Switcher marks from's credential as
	// blocked for failure.Hint (0: unknown). It returns what to use
	// instead, or ok false when nothing else is usable.
	Switch(ctx context.Context, from llm.Target, failure retry.Report) (to llm.Target, ok bool)
}

// Config sets up a session. Provider is required; every other zero value is
// documented and useful.
type Config struct {
	Provider llm.Provider
	Model    llm.Model
	// Ref identifies Provider's credential to the Switcher, as in the
	// llm.Target it handed out; "" when there is none.
	Ref    string
	System string
	Tools  []tool.Tool
	// MaxTurns bounds the model calls of one prompt; 0 means
	// agent.DefaultMaxTurns.
	MaxTurns int
	Thinking string
	// Retry is the retry policy for the calls to a provider (by
	// llm.Model.Provider): whichever the session is on, after a switch, a
	// fallback or SetModel too. Its BeforeOutput is the retry.streaming
	// setting. nil means retry.Default() for all; pol.For is pol for all;
	// settings.Settings.RetryPolicy gives each provider its own maxRetries.
	Retry func(provider string) retry.Policy
	// PartialsHidden says that no subscriber shows a message before its
	// message_end (print mode into a pipe writes each answer once it is
	// whole), so a failed call's streamed text was seen by nobody and
	// BeforeOutput may still retry it. The zero value assumes every
	// streamed delta was shown.
	PartialsHidden bool
	// Classify reads a failed model call; nil means retry.Inspect. A hook
	// in the spirit of go-retryablehttp's CheckRetry: wrap retry.Inspect to
	// treat a failure of your own server differently.
	Classify func(err error, now time.Time) retry.Report
	// Switcher rotates credentials and models on usage limits and waits
	// too long to sit out; nil means there is never another credential.
	Switcher Switcher
	// Compaction tunes compaction; NoAutoCompaction turns the automatic
	// kind off (then a context overflow fails the prompt with
	// ErrContextOverflow).
	Compaction CompactionConfig
	// Store persists the session (a *journal.Journal for a session file);
	// nil keeps it in memory only.
	Store Store
	// Resume is what to continue: a session file's content as journal.Open
	// or journal.Load returns it (its context, their entry ids, its name,
	// the warnings of loading it, which State reports), or just Messages to
	// start from. nil starts empty. The session takes Messages over rather
	// than copying them (a long session's context is the largest thing it
	// holds): the caller must not change them.
	Resume *journal.Loaded
	// NoAutoCompaction turns automatic compaction off (it can be turned on
	// later with SetAutoCompactionEnabled).
	NoAutoCompaction bool
	// Windows shares the context windows learned from overflow errors
	// with other processes (a *window.File, a fleet's Windows); nil keeps
	// what this session learns to itself.
	Windows Windows
	// Unclassified keeps the failures no classifier rule recognised (a
	// *unclassified.File); nil keeps none.
	Unclassified Unclassified
	// Log receives every retry decision; nil discards them.
	Log *slog.Logger
	// Now returns the current time for retry hints, and is the wall clock
	// a wait for a usage limit's reset ends by (resetwait.go); nil means
	// time.Now.
	Now func() time.Time
	// TracerProvider and MeterProvider receive the session's spans and
	// metrics (docs/telemetry.md); nil for both means none: no
	// OpenTelemetry code runs. CaptureContent records message text in
	// spans, which is off by default; keys are never recorded.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	CaptureContent bool
}

// Errors of Prompt.
var (
	ErrBusy            = errors.New("session: a prompt is already running")
	ErrCompacting      = errors.New("session: a compaction is running")
	ErrContextOverflow = errors.New("session: context overflow: the conversation no longer fits the model's context window")
	ErrRetryCancelled  = errors.New("session: retry cancelled")
	ErrStillOverflows  = fmt.Errorf("%w even after compaction", ErrContextOverflow)
)

// RunError is a prompt's final failure.
type RunError struct {
	Class retry.Class
	// Retries is how many retries were made before giving up.
	Retries int
	// Reason is the retry policy's reason for making no (further) retry
	// ("usage limit: resets at 15:00 (in 4h59m), longer than maxDelayMs
	// 1m0s").
	Reason string
	// Exhausted reports that every retry the policy allows was made.
	Exhausted bool
	Err       error
}

// Error says what failed. The reason is shown when it adds to Err: not for
// a class that is never retried (the provider's message says it all), nor
// after exhaustion ("retry failed after 3 calls (2 retries)" says it).
func (e *RunError) Error() string {
	msg := e.Err.Error()
	if e.Reason != "" && e.Class.Retryable() && !e.Exhausted {
		msg = e.Reason + ": " + msg
	}
	if e.Retries > 0 {
		return "retry failed after " + CallsMade(e.Retries) + ": " + msg
	}
	return msg
}

func (e *RunError) Unwrap() error { return e.Err }

// State is a snapshot of the session (the data of RPC get_state).
type State struct {
	// Model is the model of the next call; its ContextWindow is the
	// smaller of the configured (or catalog) window and the learned one.
	Model            llm.Model
	Thinking         string
	Name             string
	Compacting       bool
	AutoCompaction   bool
	Streaming        bool
	Retrying         bool
	RetryAttempt     int
	AutoRetryEnabled bool
	MessageCount     int
	PendingCount     int
	SessionFile      string
	SessionID        string
	// LoadWarnings are what loading the resumed session skipped or
	// repaired (Config.Resume's Warnings: a torn last line, dropped bad
	// lines); nil for a clean or a new session.
	LoadWarnings []string

	// Phase is what the session is doing now.
	Phase Phase
	// Usage sums the working context's answers (Cost.Total their cost)
	// and ContextTokens is its size: the figures of Stats, so a status
	// line and get_session_stats agree.
	Usage         llm.Usage
	ContextTokens int
	// Retries counts the retries this session made, over all prompts.
	Retries int
	// Queue are the messages queued to steer or follow up the running
	// prompt (PendingCount of them), steering first.
	Queue []llm.Message
	// SteeringMode and FollowUpMode are how queued messages are
	// delivered: OneAtATime or AllAtOnce.
	SteeringMode, FollowUpMode string
}

// Store persists a session's entries; *journal.Journal, the session file,
// is one. A store that keeps only messages returns nil from the rest.
type Store interface {
	// AppendDecided records a message and returns its entry id; retried
	// marks a failed assistant message that a retry replaced, d is what
	// was decided about a failed call (nil for the rest).
	AppendDecided(m llm.Message, retried bool, d *journal.Decision) (id string, err error)
	// AppendModelChange records SetModel.
	AppendModelChange(provider, modelID string) error
	// AppendCompaction records a compaction made at at: the summary, the
	// entry id of the first message kept whole, the context's tokens before.
	AppendCompaction(summary, firstKeptID string, tokensBefore int, at time.Time) error
	// SetName records the session's name.
	SetName(name string) error
	// Path and ID name the session (get_state's sessionFile, sessionId).
	Path() string
	ID() string
}

// Session is a conversation with a model. Its methods are safe for
// concurrent use; one prompt runs at a time.
type Session struct {
	cfg Config
	hub hub
	// life orders operations: an operation's last event is emitted before
	// the next one can begin (lifecycle.go).
	life sync.Mutex

	mu        sync.Mutex
	target    llm.Target // what the next model call goes to
	messages  []llm.Message
	ids       []string // Store entry ids of messages, "" where unknown
	running   bool     // an operation was accepted and has not settled
	compactOp bool     // it is an explicit compaction
	retrying  bool     // waiting before a retry
	autoRetry bool     // (the flags share a word: 8 bytes less put Session in a size class 128 bytes smaller)
	noRetry   bool     // AbortRetry landed while a retried call ran
	// autoCompact and compacting belong to compaction; noPause: compacting
	// within this prompt's run made no room. (Beside the other flags: a
	// bool among wider fields costs a word, and 16 bytes took Session past
	// the 1,024-byte size class; see TestSessionSizeClass.)
	autoCompact bool
	compacting  bool
	noPause     bool
	idle        chan struct{} // closed when it settles
	attempt     int           // the retry counter: 1-based, 0 outside a chain
	cancelRun   context.CancelFunc
	stopWait    context.CancelFunc
	steer       []llm.Message
	followUp    []llm.Message
	modes       modes
	name        string
	storeErr    error // the first failure to persist, see StoreErr
	overflows   int   // overflow compactions of this prompt
	// compactReason is the running compaction's; waiting the retry
	// announced and not yet begun; tool the running tool; retries the
	// retries made so far (phase.go).
	compactReason CompactionReason
	waiting       *retryWait
	tool          string
	retries       int
	// resetWaited: this chain waited for a usage limit's reset already.
	resetWaited bool
	// learned holds the context windows overflow errors stated (or the
	// Windows store had), nil until one did (setLearned); scale how far
	// the estimate fell short of a provider's stated count (1 or more; 0
	// until an overflow said).
	learned map[modelKey]int
	scale   float64
	prompt  []llm.Message // the running prompt's own messages
	// tel is nil without telemetry; ptrace and ctrace are the running
	// prompt's and compaction's spans (telemetry.go).
	tel    *telemetry
	ptrace *promptTrace
	ctrace *compactionTrace
}

// New returns a session; it is NewContext with context.Background().
func New(cfg Config) (*Session, error) { return NewContext(context.Background(), cfg) }

// NewContext returns a session. ctx bounds what building it waits for,
// the learned context window read from Config.Windows (Redis, for a
// fleet): a signal during start-up ends that read at once instead of
// after its own timeout. ctx is not kept.
func NewContext(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Provider == nil {
		return nil, errors.New("session: no provider")
	}
	s := &Session{cfg: cfg, target: llm.Target{Provider: cfg.Provider, Model: cfg.Model, Ref: cfg.Ref},
		autoRetry: true, autoCompact: !cfg.NoAutoCompaction, tel: newTelemetry(cfg)}
	if r := cfg.Resume; r != nil {
		// Capped, so that appending never writes into the caller's array.
		s.messages, s.name = r.Messages[:len(r.Messages):len(r.Messages)], r.Name
		if len(r.IDs) == len(s.messages) {
			// Shared as the messages are: a long session's ids are
			// worth not copying (16 bytes a message).
			s.ids = r.IDs[:len(r.IDs):len(r.IDs)]
		} else {
			s.ids = make([]string, len(s.messages))
			copy(s.ids, r.IDs)
		}
	}
	// What other processes learned shows in State from the start.
	s.loadWindow(ctx)
	return s, nil
}

// policy is the retry policy for a call to provider: Config.Retry's, and
// off while auto-retry is.
func (s *Session) policy(provider string) retry.Policy {
	p := retry.Default()
	if s.cfg.Retry != nil {
		p = s.cfg.Retry(provider)
	}
	s.mu.Lock()
	p.Disabled = p.Disabled || !s.autoRetry
	s.mu.Unlock()
	return p
}

// inspect reads a failed call once, through Config.Classify, and keeps it
// if no rule recognised it.
func (s *Session) inspect(ctx context.Context, err error) retry.Report {
	var rep retry.Report
	if s.cfg.Classify != nil {
		rep = s.cfg.Classify(err, s.now())
	} else {
		rep = retry.Inspect(err, s.now())
	}
	s.noteUnclassified(ctx, err, rep)
	return rep
}

func (s *Session) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// SetAutoRetryEnabled turns automatic retry on or off for later failures.
// Turning it off during a retry wait also ends the wait at once, as
// AbortRetry does (auto_retry_end with "Retry cancelled"): the user said
// no more retries, and the pending one is one.
func (s *Session) SetAutoRetryEnabled(on bool) {
	s.mu.Lock()
	s.autoRetry = on
	stop := s.stopWait
	s.mu.Unlock()
	if !on && stop != nil {
		stop()
	}
}

// AutoRetryEnabled reports whether failures are retried automatically.
func (s *Session) AutoRetryEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.autoRetry
}

// IsRetrying reports whether the session is waiting before a retry.
func (s *Session) IsRetrying() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryingLocked()
}

// retryingLocked is whether a retry is pending: from when its wait is
// announced (s.waiting, set before auto_retry_start) until the wait
// ended, so a client that asks right after auto_retry_start is told the
// session is retrying, not streaming, even before the wait's timer
// started. The caller holds s.mu.
func (s *Session) retryingLocked() bool { return s.retrying || s.waiting != nil }

// Messages returns a copy of the working context.
func (s *Session) Messages() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneAll(s.messages)
}

// State returns a snapshot of the session.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{
		Model:            s.effective(s.target.Model),
		Thinking:         s.cfg.Thinking,
		Name:             s.name,
		Compacting:       s.compacting || s.compactOp,
		AutoCompaction:   s.autoCompact,
		Streaming:        s.running && !s.retryingLocked() && !s.compacting && !s.compactOp,
		Retrying:         s.retryingLocked(),
		RetryAttempt:     s.attempt,
		AutoRetryEnabled: s.autoRetry,
		MessageCount:     len(s.messages),
		PendingCount:     len(s.steer) + len(s.followUp),
		SteeringMode:     modeName(s.modes.steerAll),
		FollowUpMode:     modeName(s.modes.followUpAll),
		Phase:            s.phaseLocked(),
		Retries:          s.retries,
	}
	st.Usage, st.ContextTokens = s.usageLocked()
	if st.PendingCount > 0 {
		st.Queue = append(append([]llm.Message(nil), s.steer...), s.followUp...)
	}
	if j := s.cfg.Store; j != nil {
		st.SessionFile, st.SessionID = j.Path(), j.ID()
	}
	if r := s.cfg.Resume; r != nil && len(r.Warnings) > 0 {
		st.LoadWarnings = append([]string(nil), r.Warnings...)
	}
	return st
}

// StoreErr is the first failure to persist the session (it wraps the
// Store's error), or nil while every entry was saved. Each failure was also
// announced with a session_error event; the session went on in memory, so
// its file lacks those entries. rally exits non-zero when it is set.
func (s *Session) StoreErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeErr
}

// storeFailed makes a failed save visible, never silent: logged, a
// session_error to every subscriber, and StoreErr. The session goes on.
func (s *Session) storeFailed(op string, err error) {
	s.logger().Error("session: "+op+" failed; the session goes on in memory", "err", err)
	s.mu.Lock()
	if s.storeErr == nil {
		s.storeErr = fmt.Errorf("session: %s: %w", op, err)
	}
	s.mu.Unlock()
	s.hub.emit(SessionErrorEvent{Op: op, ErrorMessage: err.Error()})
}

// AbortRetry cancels a pending retry wait and stops retrying. If a retried
// call is already running it may finish, but no further retry follows.
func (s *Session) AbortRetry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running && s.attempt > 0 {
		s.noRetry = true
	}
	if s.stopWait != nil {
		s.stopWait()
	}
}

// Abort stops the running prompt: the retry first, then the stream. The
// assistant message ends with stop reason aborted.
func (s *Session) Abort() {
	s.AbortRetry()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelRun != nil {
		s.cancelRun()
	}
}

// Steer queues a message to be delivered after the current tool call,
// interrupting the remaining ones.
func (s *Session) Steer(m llm.Message) {
	s.mu.Lock()
	s.steer = append(s.steer, m)
	s.mu.Unlock()
}

// FollowUp queues a message to be delivered when the agent would stop.
func (s *Session) FollowUp(m llm.Message) {
	s.mu.Lock()
	s.followUp = append(s.followUp, m)
	s.mu.Unlock()
}

// ClearQueue takes every queued steering and follow-up message out of the
// session and returns them (pi's clearQueue): what a UI does with
// messages a run ended before it could deliver (a failure, an abort).
func (s *Session) ClearQueue() (steering, followUp []llm.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	steering, followUp = s.steer, s.followUp
	s.steer, s.followUp = nil, nil
	return steering, followUp
}

// takeSteering hands over the queued steering messages the steering mode
// delivers now (one at a time by default, as the reference protocol).
func (s *Session) takeSteering() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return take(&s.steer, s.modes.steerAll)
}

func (s *Session) takeFollowUp() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return take(&s.followUp, s.modes.followUpAll)
}

func (s *Session) logger() *slog.Logger {
	if s.cfg.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.cfg.Log
}
