// Package hooks runs the user's commands on session events (settings
// "hooks"; README, "Hooks"), off the hot path.
//
// Each hook has a worker and a bounded queue of its own: Handle only
// encodes the event and offers it to the queues of the hooks that want it,
// so a slow or hanging hook never delays the stream, the retry timing or
// the RPC output. A hook sees its events in order, one process at a time;
// over all hooks at most MaxProcs processes run at once. An event that
// finds its hook's queue full is dropped and counted, and the count is
// logged when the worker gets to its next event (or at exit). A process is
// killed, with its whole process group, at its timeout; on Linux it also
// dies with rally. Failures are logged and reported to OnFailure, never
// returned to the session.
//
// A hook's process is started without a shell: argv as given, the event
// as one JSON line on stdin (exactly the line --mode json writes), and in
// its environment RALLY_EVENT (the event's type), RALLY_SESSION_ID,
// RALLY_SESSION_FILE (empty without a session file) and RALLY_EVENT_TIME
// (Unix milliseconds when rally saw the event, so a hook that waited in its
// queue can still time things), on top of Config.Env, which the caller
// gives without the provider key variables. Its stdout and stderr are kept
// (the last few KB) for the log and for `rally hooks test`, never passed
// on.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rally-agent/rally/internal/proc"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// DefaultQueueLen is how many events may wait for one hook. A hook that
// falls this far behind is not keeping up, and piling up more would only
// make rally's exit wait longer.
const DefaultQueueLen = 32

// Config configures a Runner. The zero Config runs no hooks.
type Config struct {
	Hooks []settings.Hook
	// Grace is how long Close waits for running and queued hooks before
	// it kills them; 0 kills them at once.
	Grace time.Duration
	// MaxProcs bounds the hook processes running at once, over all hooks;
	// 0 means settings.DefaultHooksMaxProcesses.
	MaxProcs int
	// QueueLen bounds the events waiting for each hook; 0 means
	// DefaultQueueLen.
	QueueLen int
	// Env is the environment hooks start from. nil means os.Environ(),
	// keys and all: a caller that holds provider keys passes it scrubbed
	// (the CLI removes what it removes for the tools).
	Env []string
	// Redact, when set, is applied to the output a hook wrote before it
	// is logged or returned, so a key a hook prints goes no further.
	Redact func(string) string
	// Log receives failures, drops and kills; nil discards them.
	Log *slog.Logger
	// OnFailure, when set, is told of every failed run and every batch of
	// dropped events, on a runner goroutine. It must not block for long:
	// the hook's worker waits for it.
	OnFailure func(*Error)
}

// FromSettings is the Config the settings ask for: the hooks, the exit
// grace and the process bound. Callers add Env, Log and OnFailure.
func FromSettings(st *settings.Settings) Config {
	return Config{
		Hooks:    st.Hooks,
		Grace:    time.Duration(st.HooksGraceMs) * time.Millisecond,
		MaxProcs: st.HooksMaxProcesses,
	}
}

// Source says which session an event came from.
type Source struct {
	ID   string // the session id; "" without a session file
	File string // the session file; "" without one
}

// Session is what Watch subscribes to; *session.Session is one.
type Session interface {
	Subscribe(func(session.Event)) (unsubscribe func())
	State() session.State
}

// Errors a failed run wraps.
var (
	// ErrTimeout: the hook ran past its timeoutMs and was killed.
	ErrTimeout = errors.New("killed at its timeout")
	// ErrExit: rally was exiting, the grace ran out and the hook was
	// killed.
	ErrExit = errors.New("killed at exit")
	// ErrDropped: events were dropped because the hook's queue was full.
	ErrDropped = errors.New("queue full")
)

// Error is one failure of a hook: it did not start, exited non-zero, was
// killed, or missed events (Err is ErrDropped and Dropped counts them).
type Error struct {
	Hook    int    // index in the hooks setting
	Command string // argv[0]
	Event   string // the event type; for a drop, the last one dropped
	Dropped int
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("hook %s on %s: %s", e.Name(), e.Event, e.Reason())
}

// Name says which hook failed: "hooks[0] (notify-send)".
func (e *Error) Name() string { return fmt.Sprintf("hooks[%d] (%s)", e.Hook, e.Command) }

// Reason says what went wrong, without the hook and event: "exit status
// 1", "dropped 3 event(s): queue full".
func (e *Error) Reason() string {
	if errors.Is(e.Err, ErrDropped) {
		return fmt.Sprintf("dropped %d event(s): %v", e.Dropped, e.Err)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Runner runs the hooks of one rally process. Its methods are safe for
// concurrent use.
type Runner struct {
	cfg     Config
	log     *slog.Logger
	env     []string
	workers []*worker
	slots   chan struct{} // one token per process allowed to run
	// ctx is cancelled (cause ErrExit) when the grace is over.
	ctx    context.Context
	kill   context.CancelCauseFunc
	wg     sync.WaitGroup
	killed atomic.Int64 // runs killed at exit
	runs   atomic.Int64 // hook runs started, for each run's mark
	lost   atomic.Int64 // events still queued at exit
	// queued counts workers holding an event and waiting for a slot (the
	// bound test watches it).
	queued atomic.Int64

	// unadopt ends what New's proc.AdoptOrphans started.
	unadopt func()

	mu     sync.Mutex
	closed bool
}

type worker struct {
	i       int
	hook    settings.Hook
	on      map[string]bool
	queue   chan job
	dropped atomic.Int64
	last    atomic.Value // string: the type of the last dropped event
}

type job struct {
	src  Source
	typ  string
	line []byte
	at   time.Time
}

// New starts a Runner; Close must be called to end it.
func New(cfg Config) *Runner {
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = settings.DefaultHooksMaxProcesses
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	r := &Runner{cfg: cfg, log: cfg.Log, slots: make(chan struct{}, cfg.MaxProcs)}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	base := cfg.Env
	if base == nil {
		base = os.Environ()
	}
	r.env = cleanEnv(base)
	r.ctx, r.kill = context.WithCancelCause(context.Background())
	r.unadopt = func() {}
	if len(cfg.Hooks) > 0 {
		// Orphans a hook leaves come to rally, not init (Linux), so that
		// run finds them even in a session and an environment of their
		// own (setsid, env -i).
		r.unadopt, _ = proc.AdoptOrphans()
	}
	for i, h := range cfg.Hooks {
		w := &worker{i: i, hook: h, on: map[string]bool{}, queue: make(chan job, cfg.QueueLen)}
		for _, name := range h.On {
			w.on[name] = true
		}
		r.workers = append(r.workers, w)
		r.wg.Add(1)
		go r.work(w)
	}
	return r
}

// Watch subscribes the runner to s; the returned function unsubscribes
// (after every event already emitted reached the queues). The session's id
// and file are read once, here.
func (r *Runner) Watch(s Session) (stop func()) {
	st := s.State()
	src := Source{ID: st.SessionID, File: st.SessionFile}
	return s.Subscribe(func(e session.Event) { r.Handle(src, e) })
}

// Handle offers e to every hook that runs on its type. It never blocks: a
// hook whose queue is full misses the event (counted, logged later).
// After Close it does nothing.
func (r *Runner) Handle(src Source, e Event) {
	typ := typeOf(e)
	var j job
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	for _, w := range r.workers {
		if !w.on[typ] {
			continue
		}
		if j.line == nil {
			j = job{src: src, typ: typ, line: Encode(e), at: time.Now()}
		}
		select {
		case w.queue <- j:
		default:
			w.last.Store(typ)
			w.dropped.Add(1)
		}
	}
}

// work runs w's events one after the other.
func (r *Runner) work(w *worker) {
	defer r.wg.Done()
	for j := range w.queue {
		r.reportDrops(w)
		if r.ctx.Err() != nil {
			r.lost.Add(1)
			continue
		}
		r.queued.Add(1)
		select {
		case r.slots <- struct{}{}:
			r.queued.Add(-1)
		case <-r.ctx.Done():
			r.queued.Add(-1)
			r.lost.Add(1)
			continue
		}
		res := r.run(r.ctx, w.i, j)
		<-r.slots
		switch {
		case res.Err == nil:
		case errors.Is(res.Err, ErrExit):
			r.killed.Add(1)
		default:
			r.fail(res.Err, "stderr", res.Stderr, "ms", res.Duration.Milliseconds())
		}
	}
	r.reportDrops(w)
}

// reportDrops logs and reports the events w missed since the last report.
func (r *Runner) reportDrops(w *worker) {
	n := w.dropped.Swap(0)
	if n == 0 {
		return
	}
	last, _ := w.last.Load().(string)
	r.fail(&Error{Hook: w.i, Command: argv0(w.hook), Event: last, Dropped: int(n), Err: ErrDropped})
}

// argv0 names a hook's program ("" for a hand-built hook without one).
func argv0(h settings.Hook) string {
	if len(h.Command) == 0 {
		return ""
	}
	return h.Command[0]
}

func (r *Runner) fail(err *Error, attrs ...any) {
	r.log.Warn("hooks: "+err.Error(), append([]any{"hook", fmt.Sprintf("hooks[%d]", err.Hook), "command", err.Command, "event", err.Event}, attrs...)...)
	if r.cfg.OnFailure != nil {
		r.cfg.OnFailure(err)
	}
}

// Close stops taking events and waits for the hooks still running or
// queued, at most the grace (or until ctx is done), then kills what is
// left. What it killed or dropped is logged, and returned as an error
// wrapping ErrExit.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for _, w := range r.workers {
		close(w.queue)
	}
	r.mu.Unlock()

	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	grace := time.NewTimer(r.cfg.Grace)
	defer grace.Stop()
	defer r.unadopt() // after the last run's cleanup
	select {
	case <-done:
		r.kill(nil)
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	r.kill(ErrExit)
	<-done // killed processes end at once; pipes are bounded by waitDelay
	killed, lost := r.killed.Load(), r.lost.Load()
	if killed == 0 && lost == 0 {
		return nil
	}
	err := fmt.Errorf("hooks: %w after the %v grace: %d running hook(s) killed, %d queued event(s) dropped", ErrExit, r.cfg.Grace, killed, lost)
	r.log.Warn(err.Error(), "killed", killed, "dropped", lost)
	return err
}
