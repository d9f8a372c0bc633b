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
	"sync/atomic"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/rpc/wire"
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
	// Connect returns the target for a model of Models (set_model): its
	// client, the model as it will be used (a credential rotation may
	// start on a fallback) and the Ref of its credential. nil refuses
	// set_model.
	Connect func(ctx context.Context, m llm.Model) (llm.Target, error)
	// OpenSession returns a session for the session file at path, resumed
	// with the same settings, for switch_session, fork and clone (which
	// open the new file they wrote). Like NewSession it is called once the
	// current run has settled. nil refuses the three.
	OpenSession func(ctx context.Context, path string) (*session.Session, error)
	// Resume, when set, is called with the first session and each one
	// switch_session opened, once it is served: the caller resumes what
	// its file was stopped in, such as a wait for a usage limit's reset,
	// calling watch first so that what it starts reaches the client.
	Resume func(ctx context.Context, sess *session.Session, watch func())
	// Dialogs, when set, is attached to the output: the questions asked
	// through it (tools.confirm) go to the client as pi's
	// extension_ui_request, and its extension_ui_response lines answer
	// them.
	Dialogs *Dialogs
	// Dir is the working directory of bash commands and where export_html
	// writes when given no path; "" is the process's.
	Dir string
	// Redact rewrites the texts export_html writes and bash returns (the
	// program's secret redactor); nil leaves them.
	Redact func(string) string
	// Deltas starts the output with message_update in its delta-only form,
	// as set_event_options {partial:false} switches to it.
	Deltas bool
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
	s.resume()
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

// server is one Serve call's state. What runs and when it settles is the
// session's (Start, Run, Idle); the server only orders its own answers
// with the events it writes (Subscription.Sync).
type server struct {
	ctx    context.Context
	cancel context.CancelFunc
	cfg    Config
	out    *output
	log    *slog.Logger

	mu     sync.Mutex
	sess   *session.Session
	sessID string // for a session without a store
	sub    *session.Subscription
	target *llm.Target // the one set_model chose, kept across new_session
	deltas atomic.Bool // message_update in the delta-only form
	// wg counts the goroutines that answer a compact or a bash.
	wg sync.WaitGroup
	// stopBash cancels the running bash command (abort_bash); nil when none.
	stopBash context.CancelFunc
}

func newServer(ctx context.Context, w io.Writer, cfg Config) *server {
	ctx, cancel := context.WithCancel(ctx)
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{ctx: ctx, cancel: cancel, cfg: cfg, out: newOutput(w), log: log}
	s.deltas.Store(cfg.Deltas)
	s.adopt(cfg.Session)
	cfg.Dialogs.attach(s.out.send)
	return s
}

// adopt makes sess the served session.
func (s *server) adopt(sess *session.Session) {
	s.mu.Lock()
	s.sess, s.sub, s.sessID = sess, nil, newID()
	s.mu.Unlock()
}

// watch forwards the session's events to the output from now on, once,
// and returns the subscription. It is called before anything that emits
// events starts (a run, a compaction) rather than at start, so a process
// that only answers queries never starts the delivering goroutine.
func (s *server) watch() (*session.Session, *session.Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sub == nil {
		// One encoder per subscription: events arrive one at a time, and
		// it reuses its buffer and the escaped text of the last line. It
		// is done with each event once it returns (the line is copied
		// into the output's buffer; the text cache keeps strings, which
		// never change), so message_updates are loaned: no allocation
		// per delta.
		//
		// Lines are flushed when the subscription has delivered all it
		// has (see output): a streamed answer's deltas go out a read of
		// the model's stream at a time.
		var enc wire.Encoder
		s.sub = s.sess.WatchBatched(func(e session.Event) {
			enc.Deltas = s.deltas.Load()
			k := e.Kind()
			s.out.buffer(enc.Encode(e), k == session.MessageUpdate || k == session.ToolExecutionUpdate)
		}, s.out.flush)
	}
	return s.sess, s.sub
}

// resume hands the session served now to Config.Resume.
func (s *server) resume() {
	if s.cfg.Resume != nil {
		s.cfg.Resume(s.ctx, s.session(), func() { s.watch() })
	}
}

func (s *server) session() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// caughtUp waits until every event emitted so far is written, so that an
// answer sent next follows them.
func (s *server) caughtUp() {
	s.mu.Lock()
	sub := s.sub
	s.mu.Unlock()
	if sub != nil {
		sub.Sync(s.ctx)
	}
}

// shutdownGrace bounds how long shutdown waits for the run to settle and
// its events to be written: a client that stopped reading our output must
// not keep rally alive.
const shutdownGrace = 5 * time.Second

// shutdown aborts the run, waits for it to settle and for every event to
// be written, and flushes the output.
func (s *server) shutdown() error {
	s.cfg.Dialogs.attach(nil)
	s.cancel()
	sess := s.session()
	sess.Abort()
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		<-sess.Idle()
		s.wg.Wait()
		s.mu.Lock()
		sub := s.sub
		s.sub = nil
		s.mu.Unlock()
		if sub != nil {
			sub.Close() // returns once every event emitted so far was written
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

func (s *server) respond(r Response) { s.out.send(encodeResponse(r)) }

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
