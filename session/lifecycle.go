package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/rally-agent/rally/llm"
)

// The lifecycle of an operation (a prompt, a continue, a compaction): the
// session accepts one at a time (Start answers at once: accepted, or
// ErrBusy/ErrCompacting), runs it, and settles it (its last event is
// agent_settled, an explicit compaction's too; then Run.Done is closed
// and Idle's channel too). Nothing
// of a later operation is emitted before an earlier one's agent_settled, so
// a subscriber sees operations one after the other.

// Run is an operation the session accepted: a prompt, a continue or an
// explicit compaction.
type Run struct {
	done       chan struct{}
	err        error
	compaction *CompactionResult
}

// Compaction is the result of an explicit compaction (StartCompact) once
// Done is closed; nil for a prompt, or when the compaction failed.
func (r *Run) Compaction() *CompactionResult {
	select {
	case <-r.done:
		return r.compaction
	default:
		return nil
	}
}

// Done is closed when the run has settled: every retry and compaction is
// over and agent_settled has been emitted.
func (r *Run) Done() <-chan struct{} { return r.done }

// Err is the run's result once Done is closed: nil, a *RunError for a
// final failure, or an error wrapping context.Canceled (an abort) or
// context.DeadlineExceeded (the context's deadline).
func (r *Run) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Wait waits until the run has settled and returns Err.
func (r *Run) Wait() error {
	<-r.done
	return r.err
}

// PromptOptions are the extras of a prompt.
type PromptOptions struct {
	// Images are attached to the prompt (image content blocks).
	Images []llm.Content
	// Accepted, if set, is called once the session has accepted the
	// prompt: after every event of earlier operations was emitted and
	// before the first event of this one. The RPC server answers its
	// prompt command there, so that the answer never overtakes the
	// previous run's agent_settled nor follows the new run's agent_start.
	// It must not call the session.
	Accepted func()
}

// Prompt sends text as a user message and runs the agent until the run has
// settled: success, final failure (a *RunError), or cancellation (an error
// wrapping context.Canceled, or context.DeadlineExceeded when ctx's
// deadline cut it). Retries happen inside Prompt.
func (s *Session) Prompt(ctx context.Context, text string, opts PromptOptions) error {
	r, err := s.Start(ctx, text, opts)
	if err != nil {
		return err
	}
	return r.Wait()
}

// Start is Prompt without the wait: it returns as soon as the session has
// accepted the prompt (ErrBusy while a prompt runs, ErrCompacting during a
// compaction), and the run goes on until ctx ends or Abort.
func (s *Session) Start(ctx context.Context, text string, opts PromptOptions) (*Run, error) {
	m := llm.Message{Role: llm.User, Content: append([]llm.Content{llm.Text(text)}, opts.Images...), Timestamp: llm.Now()}
	return s.start(ctx, []llm.Message{m}, opts.Accepted)
}

// Continue runs the agent from the current context without a new message,
// e.g. after a failure the user wants to try again. It returns when the run
// has settled, as Prompt does.
func (s *Session) Continue(ctx context.Context) error {
	r, err := s.start(ctx, nil, nil)
	if err != nil {
		return err
	}
	return r.Wait()
}

func (s *Session) start(ctx context.Context, prompt []llm.Message, accepted func()) (*Run, error) {
	runCtx, end, err := s.begin(ctx, false, accepted)
	if err != nil {
		return nil, err
	}
	if prompt != nil {
		prompt = s.takePending(prompt)
	}
	r := &Run{done: make(chan struct{})}
	go func() {
		r.err = s.run(runCtx, prompt)
		end(func() { s.hub.emit(AgentSettledEvent{Err: r.err}) })
		close(r.done)
	}()
	return r, nil
}

// StartCompact is Compact without the wait: it returns once the session
// has accepted the compaction (ErrBusy while a prompt runs, ErrCompacting
// during another compaction); Run.Compaction has the result.
func (s *Session) StartCompact(ctx context.Context) (*Run, error) {
	ctx, end, err := s.begin(ctx, true, nil)
	if err != nil {
		return nil, err
	}
	r := &Run{done: make(chan struct{})}
	go func() {
		r.compaction, r.err = s.compact(ctx, ReasonManual, false)
		end(func() { s.hub.emit(AgentSettledEvent{Err: r.err}) })
		close(r.done)
	}()
	return r, nil
}

// Compact summarises the older part of the conversation now (RPC compact,
// `rally compact`) and returns what it did. It fails with ErrBusy while a
// prompt runs, ErrCompacting during another compaction, and
// ErrNothingToCompact when the conversation is all recent.
func (s *Session) Compact(ctx context.Context) (*CompactionResult, error) {
	r, err := s.StartCompact(ctx)
	if err != nil {
		return nil, err
	}
	err = r.Wait()
	return r.compaction, err
}

// Idle returns a channel that is closed once no operation runs: at once
// when the session is idle, else when the running one has settled.
func (s *Session) Idle() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil {
		return closed
	}
	return s.idle
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// begin accepts the one operation a session runs at a time (a prompt or a
// compaction) with fresh per-prompt state; end, which must be called,
// resets it, emitting last (the agent_settled) before a later operation
// can begin. Abort cancels the returned context.
func (s *Session) begin(ctx context.Context, compaction bool, accepted func()) (_ context.Context, end func(last func()), err error) {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.running && s.compactOp:
		return nil, nil, ErrCompacting
	case s.running:
		return nil, nil, ErrBusy
	}
	ctx, cancel := context.WithCancel(ctx)
	idle := make(chan struct{})
	s.running, s.compactOp, s.idle = true, compaction, idle
	s.attempt, s.noRetry, s.overflows, s.noPause, s.cancelRun = 0, false, 0, false, cancel
	if accepted != nil {
		s.mu.Unlock()
		accepted()
		s.mu.Lock()
	}
	return ctx, func(last func()) {
		cancel()
		s.life.Lock()
		defer s.life.Unlock()
		s.mu.Lock()
		s.running, s.compactOp, s.idle = false, false, nil
		s.retrying, s.attempt, s.noRetry, s.cancelRun, s.stopWait = false, 0, false, nil, nil
		s.waiting, s.tool = nil, ""
		s.mu.Unlock()
		if last != nil {
			last()
		}
		close(idle)
	}, nil
}

// stopped is the error of an operation its context ended: a deadline
// stays a deadline, anything else is an abort.
func stopped(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("session: %s: %w", what, context.DeadlineExceeded)
	}
	return fmt.Errorf("session: %s aborted: %w", what, context.Canceled)
}
