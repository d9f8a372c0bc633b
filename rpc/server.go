package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/jsonl"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Config is what Serve needs besides its streams.
type Config struct {
	// Session is the session served at first. Required. Serve forwards the
	// events of what it starts on it (prompts, compactions).
	Session *session.Session
	// NewSession returns a fresh session with the same settings, for
	// new_session. It is called after the current session's run has been
	// aborted and has settled; the caller may release the old session's
	// resources then. nil refuses new_session.
	NewSession func(ctx context.Context) (*session.Session, error)
	// Models lists the models of get_available_models, which set_model
	// picks from. nil offers only the session's model.
	Models func() []llm.Model
	// Connect returns the client for a model of Models (set_model), and
	// the model as it will be used (a credential rotation may start on a
	// fallback). nil refuses set_model.
	Connect func(ctx context.Context, m llm.Model) (llm.Provider, llm.Model, error)
	// Log receives what goes wrong outside the protocol (a failed write, a
	// run's error); nil discards it. It must not write to the output.
	Log *slog.Logger
}

// Serve reads commands from in and writes responses and events to out
// until in ends or ctx is cancelled. Either way it aborts the running
// prompt, waits for the run to settle and its events to be written (at
// most five seconds), and returns nil; a write error on out, or a run that
// would not settle, is returned. Nothing on in can end it: a bad line gets
// an error response.
//
// When ctx is cancelled while a read from in is blocked, Serve returns
// without waiting for the read; the reading goroutine ends with in.
// MaxLine is the longest command line the server reads (images arrive
// base64-encoded inside prompts, so it is generous). A longer line is
// answered with a parse error and skipped up to its line break.
const MaxLine = 64 << 20

func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	if cfg.Session == nil {
		return errors.New("rpc: serve: no session")
	}
	s := newServer(ctx, out, cfg)
	lines := make(chan input, 16)
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(s.ctx, in, lines) }()
	for {
		select {
		case <-ctx.Done():
			return s.shutdown()
		case l := <-lines:
			s.handleInput(l)
		case err := <-readErr:
			// Lines read before the end are still to be answered.
			for len(lines) > 0 {
				s.handleInput(<-lines)
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				s.log.Error("rpc: read commands", "err", err)
			}
			return s.shutdown()
		}
	}
}

// input is one line read, or the news that one was too long.
type input struct {
	b       []byte
	tooLong bool
}

// readLines reads lines (copies: the reader reuses its buffer) until in
// ends.
func readLines(ctx context.Context, in io.Reader, lines chan<- input) error {
	lr := jsonl.NewReader(in, MaxLine)
	for {
		b, err := lr.Next()
		var l input
		switch {
		case errors.Is(err, jsonl.ErrTooLong):
			l.tooLong = true
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case len(trimSpace(b)) == 0:
			continue // blank lines are not commands
		default:
			l.b = append([]byte(nil), b...)
		}
		select {
		case lines <- l:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// server is one Serve call's state.
type server struct {
	ctx    context.Context
	cancel context.CancelFunc
	cfg    Config
	out    *output
	log    *slog.Logger

	mu       sync.Mutex
	sess     *session.Session
	sessID   string // for a session without a store
	unsub    func()
	running  bool          // a prompt's run is going
	runDone  chan struct{} // closed when it has settled
	settled  chan struct{} // closed when its agent_settled was written
	provider llm.Provider  // the one set_model chose, kept across new_session
	// compactStop cancels the explicit compaction going on (nil: none);
	// compactDone is closed when it has ended, compactWritten when its
	// compaction_end line is out.
	compactStop    context.CancelFunc
	compactDone    chan struct{}
	compactWritten chan struct{}
	wg             sync.WaitGroup
}

func newServer(ctx context.Context, w io.Writer, cfg Config) *server {
	ctx, cancel := context.WithCancel(ctx)
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{ctx: ctx, cancel: cancel, cfg: cfg, out: newOutput(w), log: log}
	s.adopt(cfg.Session)
	return s
}

// adopt makes sess the served session.
func (s *server) adopt(sess *session.Session) {
	s.mu.Lock()
	s.sess, s.unsub, s.sessID = sess, nil, newID()
	s.mu.Unlock()
}

// subscribeLocked forwards sess's events to the output from now on, once. It
// is called before anything that emits events starts (a run, a
// compaction) rather than at start: a subscription costs the session a
// large buffer, which would delay the first get_state of a fresh process
// by milliseconds. Called with s.mu held.
func (s *server) subscribeLocked() {
	if s.unsub != nil {
		return
	}
	// One encoding buffer per subscription: events arrive one at a time,
	// and a growing partial message would otherwise be reallocated for
	// every delta.
	var buf []byte
	s.unsub = s.sess.Subscribe(func(e session.Event) { buf = s.event(e, buf[:0]) })
}

func (s *server) session() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// event writes one session event, encoded into buf, and returns buf for
// the next. Streaming deltas are not flushed one by one (see output).
func (s *server) event(e session.Event, buf []byte) []byte {
	line := e.AppendJSON(buf)
	switch e.Type {
	case agent.AgentSettled:
		s.settle(line)
	case agent.CompactionEnd:
		s.out.send(line, true)
		s.mu.Lock()
		if s.compactWritten != nil {
			close(s.compactWritten)
			s.compactWritten = nil
		}
		s.mu.Unlock()
	default:
		s.out.send(line, e.Type != agent.MessageUpdate && e.Type != agent.ToolExecutionUpdate)
	}
	return line
}

// settle writes a run's agent_settled line.
func (s *server) settle(line []byte) {
	// The run ends for prompt's check and the line goes out in one step,
	// under s.mu: a client that has read agent_settled can prompt again at
	// once, and a new prompt's response never comes before the old run's
	// agent_settled. abort's wait ends after, so abort answers after it.
	s.mu.Lock()
	settled := s.settled
	if settled != nil {
		s.running, s.settled = false, nil
	}
	s.out.send(line, true)
	s.mu.Unlock()
	if settled != nil {
		close(settled)
	}
}

// shutdownGrace bounds how long shutdown waits for the run to settle and
// its events to be written: a client that stopped reading our output must
// not keep rally alive.
const shutdownGrace = 5 * time.Second

// shutdown aborts the run, waits for it to settle and for every event to
// be written, and flushes the output.
func (s *server) shutdown() error {
	s.cancel()
	s.session().Abort()
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		s.wg.Wait()
		s.mu.Lock()
		unsub := s.unsub
		s.unsub = nil
		s.mu.Unlock()
		if unsub != nil {
			unsub() // returns once every event emitted so far was written
		}
	}()
	select {
	case <-settled:
	case <-time.After(shutdownGrace):
		return fmt.Errorf("rpc: shutdown: the run did not settle within %v (is the output read?)", shutdownGrace)
	}
	if err := s.out.close(); err != nil {
		return fmt.Errorf("rpc: write: %w", err)
	}
	return nil
}

func (s *server) handleInput(l input) {
	if l.tooLong {
		s.respond(fail("", CmdParse, fmt.Sprintf("line longer than %d bytes; skipped", MaxLine)))
		return
	}
	c, err := DecodeCommand(l.b)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			s.respond(fail(de.ID, de.Command, de.Msg))
		} else {
			s.respond(fail("", CmdParse, err.Error()))
		}
		return
	}
	if r := s.handle(c); r != nil {
		s.respond(*r)
	}
}

func (s *server) respond(r Response) { s.out.send(encodeResponse(r), true) }

func encodeResponse(r Response) []byte {
	r.Type = "response"
	b, err := json.Marshal(r)
	if err != nil { // only Data can fail, and it was marshalled already
		b, _ = json.Marshal(fail(r.ID, r.Command, "internal error: "+err.Error()))
	}
	return b
}

func ok(id, command string, data any) Response {
	r := Response{ID: id, Command: command, Success: true}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return fail(id, command, "internal error: "+err.Error())
		}
		r.Data = b
	}
	return r
}

func fail(id, command, msg string) Response {
	return Response{ID: id, Command: command, Success: false, Error: msg}
}

// newID is a session id for a session that is not persisted (pi gives
// those an id too).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
