package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/jsonl"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rally-agent/rally/rpc/wire"
	"github.com/rally-agent/rally/session"
)

// maxClientLine bounds one line the client reads: get_messages of a long
// session is one line, so it is far above the server's command limit.
const maxClientLine = 1 << 30

// ErrClosed is returned by calls on a client whose connection has ended.
var ErrClosed = errors.New("rpc: connection closed")

// Client talks to an RPC server: a `rally --mode rpc` process it started
// (Start) or any reader/writer pair (NewClient). Its methods are safe for
// concurrent use; each command waits for its own response.
type Client struct {
	w   io.Writer
	wmu sync.Mutex

	r      io.Reader
	cmd    *exec.Cmd
	stderr *tail
	next   atomic.Uint64

	mu      sync.Mutex
	pending map[string]pendingCall
	subs    map[*subscriber]struct{}
	active  bool          // a prompt's run has not settled yet
	idle    chan struct{} // closed when active turns false
	seq     uint64        // events read so far
	settled uint64        // seq of the last agent_settled
	err     error         // why the connection ended

	dec wire.Decoder // the reader's own

	done      chan struct{} // closed when the reader has ended
	closeOnce sync.Once
	closeErr  error
}

// NewClient attaches to a server that reads commands from w and writes to
// r. Close closes w (when it is an io.Closer) and, if the server does not
// close r within five seconds, r.
func NewClient(r io.Reader, w io.Writer) *Client {
	c := &Client{w: w, r: r, pending: map[string]pendingCall{}, subs: map[*subscriber]struct{}{},
		done: make(chan struct{})}
	go c.read(r)
	return c
}

// Start runs `path --mode rpc args…` and attaches to it. ctx bounds the
// process's life: when ctx is done the process is asked to stop (SIGTERM)
// and killed if it has not within five seconds. Its stderr is kept (the
// last 64 KiB) for Stderr.
func Start(ctx context.Context, path string, args ...string) (*Client, error) {
	cmd := exec.CommandContext(ctx, path, append([]string{"--mode", "rpc"}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("rpc: start: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("rpc: start: %w", err)
	}
	t := &tail{max: 64 << 10}
	cmd.Stderr = t
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rpc: start: %w", err)
	}
	c := NewClient(out, in)
	c.cmd, c.stderr = cmd, t
	// Delta-only message_update lines keep a long answer's output linear;
	// the client rebuilds the partial messages. Not waited for: commands
	// are answered in order, so it applies before any later one.
	c.send(Command{ID: "events", Type: CmdSetEventOptions, Partial: new(bool)})
	return c, nil
}

// Stderr returns the tail of a started process's stderr ("" for a client
// made by NewClient).
func (c *Client) Stderr() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.String()
}

// Close ends the connection: it closes the writer (a started process's
// stdin, which makes rally abort any run and exit cleanly) and waits for
// the server to close its side, up to five seconds; then it kills the
// process (or closes the reader, when it is an io.Closer). For a started
// process it returns how the process ended.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if wc, ok := c.w.(io.Closer); ok {
			wc.Close()
		}
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-c.done:
		case <-timer.C:
			if c.cmd != nil {
				c.cmd.Process.Kill()
				<-c.done // the pipe closes with the process
			} else if rc, ok := c.r.(io.Closer); ok {
				rc.Close()
				<-c.done
			}
		}
		if c.cmd != nil {
			// Wait only now: it closes the stdout pipe, which must not
			// happen before the reader has seen everything.
			c.closeErr = c.cmd.Wait()
		}
	})
	return c.closeErr
}

// Done is closed when the connection has ended (the server exited or the
// reader failed); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends a command and waits for its response. cmd.ID is set by the
// client. A response with success false is returned as is, not as an
// error; the typed methods turn it into an *Error.
func (c *Client) Call(ctx context.Context, cmd Command) (*Response, error) {
	cmd.ID = "req-" + strconv.FormatUint(c.next.Add(1), 10)
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	// A prompt without streamingBehavior that succeeds has started a
	// run, whose events follow its response.
	c.pending[cmd.ID] = pendingCall{ch: ch, startsRun: cmd.Type == CmdPrompt && cmd.StreamingBehavior == ""}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, cmd.ID)
		c.mu.Unlock()
	}()

	if err := c.send(cmd); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return &r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("rpc: %s: %w", cmd.Type, ctx.Err())
	case <-c.done:
		return nil, fmt.Errorf("rpc: %s: %w", cmd.Type, c.Err())
	}
}

// send writes one command line.
func (c *Client) send(cmd Command) error {
	b, err := json.Marshal(cmd)
	if err == nil {
		c.wmu.Lock()
		_, err = c.w.Write(append(b, '\n'))
		c.wmu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("rpc: %s: %w", cmd.Type, err)
	}
	return nil
}

// call is Call for the typed methods: a failure response is an *Error,
// and the data is decoded into data (when not nil).
func (c *Client) call(ctx context.Context, cmd Command, data any) error {
	r, err := c.Call(ctx, cmd)
	if err != nil {
		return err
	}
	if !r.Success {
		return &Error{Command: cmd.Type, Message: r.Error}
	}
	if data != nil && len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, data); err != nil {
			return fmt.Errorf("rpc: %s: decode data: %w", cmd.Type, err)
		}
	}
	return nil
}

// WaitSettled waits until the running prompt has settled: its
// agent_settled event, which comes after every retry (not at the first
// agent_end), and until every subscriber has been handed that event. It
// returns at once when no prompt is running. It must not be called from a
// subscriber's function (it would wait for itself).
func (c *Client) WaitSettled(ctx context.Context) error {
	c.mu.Lock()
	idle := c.idle
	active := c.active
	c.mu.Unlock()
	if active {
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("rpc: wait for agent_settled: %w", ctx.Err())
		case <-c.done:
			return fmt.Errorf("rpc: wait for agent_settled: %w", c.Err())
		}
	}
	c.mu.Lock()
	target := c.settled
	subs := make([]*subscriber, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, s := range subs {
		if err := s.waitDelivered(ctx, target); err != nil {
			return fmt.Errorf("rpc: wait for agent_settled: %w", err)
		}
	}
	return nil
}

func (c *Client) setActive(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setActiveLocked(on)
}

func (c *Client) setActiveLocked(on bool) {
	switch {
	case on && !c.active:
		c.active, c.idle = true, make(chan struct{})
	case !on && c.active:
		c.active = false
		close(c.idle)
	}
}

// read dispatches every line of the server's output until it ends.
func (c *Client) read(r io.Reader) {
	lr := jsonl.NewReader(r, maxClientLine)
	var err error
	for {
		var b []byte
		b, err = lr.Next()
		if errors.Is(err, jsonl.ErrTooLong) {
			continue
		}
		if err != nil {
			break
		}
		c.dispatch(b)
	}
	if errors.Is(err, io.EOF) {
		err = ErrClosed
	} else {
		err = fmt.Errorf("rpc: read: %w", err)
	}
	c.mu.Lock()
	c.err = err
	subs := c.subs
	c.subs = map[*subscriber]struct{}{}
	c.mu.Unlock()
	for s := range subs {
		s.stop()
	}
	close(c.done)
}

var (
	idPrefix       = []byte(`{"id":`)
	responsePrefix = []byte(`{"type":"response"`)
)

func (c *Client) dispatch(b []byte) {
	if bytes.HasPrefix(b, idPrefix) || bytes.HasPrefix(b, responsePrefix) {
		c.response(b)
		return
	}
	e, err := c.dec.Decode(b)
	if err != nil {
		return // not a protocol line; a server never writes one
	}
	if e.Kind() == "response" { // a response with its keys in another order
		c.response(b)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	for s := range c.subs {
		s.push(c.seq, e)
	}
	switch e.Kind() {
	case session.AgentStart:
		c.setActiveLocked(true)
	case session.AgentSettled:
		c.settled = c.seq
		c.setActiveLocked(false)
	}
}

func (c *Client) response(b []byte) {
	var r Response
	if json.Unmarshal(b, &r) != nil {
		return
	}
	c.mu.Lock()
	p, ok := c.pending[r.ID]
	c.mu.Unlock()
	if !ok {
		return
	}
	if p.startsRun && r.Success {
		// Marked here, in order with the events, so that WaitSettled
		// called after Prompt returns cannot miss the run.
		c.setActive(true)
	}
	select {
	case p.ch <- r:
	default: // a second response to one id; the first one counts
	}
}

// pendingCall is a command waiting for its response.
type pendingCall struct {
	ch        chan Response
	startsRun bool
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
