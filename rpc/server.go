package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// Config is what Serve needs besides its streams.
type Config struct {
	// Session is the session served at first. Required.
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
// prompt, waits for the run to settle and its events to be written, and
// returns nil; a write error on out is returned. Nothing on in can end it:
// a bad line gets an error response.
//
// When ctx is cancelled while a read from in is blocked, Serve returns
// without waiting for the read; the reading goroutine ends with in.
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
	lr := newLineReader(in, MaxLine)
	for {
		b, err := lr.next()
		var l input
		switch {
		case errors.Is(err, errLineTooLong):
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
	// compactDone is closed when it has ended.
	compactStop context.CancelFunc
	compactDone chan struct{}
	wg          sync.WaitGroup
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

// adopt makes sess the served session: its events go to the output from
// now on.
func (s *server) adopt(sess *session.Session) {
	unsub := sess.Subscribe(s.event)
	s.mu.Lock()
	s.sess, s.unsub, s.sessID = sess, unsub, newID()
	s.mu.Unlock()
}

func (s *server) session() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// event writes one session event. Streaming deltas are not flushed one by
// one (see output).
func (s *server) event(e session.Event) {
	flush := e.Type != agent.MessageUpdate && e.Type != agent.ToolExecutionUpdate
	s.out.send(e.AppendJSON(make([]byte, 0, 256)), flush)
	if e.Type == agent.AgentSettled {
		s.settledSeen()
	}
}

// shutdown aborts the run, waits for it to settle and for every event to
// be written, and closes the output.
func (s *server) shutdown() error {
	s.cancel()
	s.session().Abort()
	s.wg.Wait()
	s.mu.Lock()
	unsub := s.unsub
	s.unsub = nil
	s.mu.Unlock()
	if unsub != nil {
		unsub() // returns once every event emitted so far was written
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
