package rpc

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// deltaWindow is the longest a streamed delta waits in the buffer for
// more to share its write. A millisecond is far below what a reader of
// streamed text can notice, and at high rates it turns a write per delta
// into a write per millisecond.
const deltaWindow = time.Millisecond

// output is the only writer of the server's output. Lines are written
// whole under one lock, so they never interleave. A line marked flush
// (responses, every event but the streaming deltas) is flushed at once;
// deltas are flushed with the next such line or after deltaWindow.
//
// Writing on the caller's goroutine (the session's subscriber, the command
// loop) rather than handing lines to a writer goroutine matters: waking a
// sleeping goroutine for every delta costs more than encoding it.
type output struct {
	mu      sync.Mutex
	raw     io.Writer
	w       *bufio.Writer
	timer   *time.Timer
	pending bool  // deltas wait in w
	closed  bool  // no more lines
	err     error // the first write error; later lines are dropped
}

// Buffer sizes: small until the first streamed delta (a fresh process
// answers its first get_state without a large allocation), then large, so
// that a burst of deltas of a long answer (each line carries the whole
// partial message) goes out in few large writes.
const (
	smallBuffer = 16 << 10
	largeBuffer = 1 << 20
)

func newOutput(w io.Writer) *output {
	o := &output{raw: w, w: bufio.NewWriterSize(w, smallBuffer)}
	o.timer = time.AfterFunc(time.Hour, o.flushPending)
	o.timer.Stop()
	return o
}

// send writes one encoded line (without its newline).
func (o *output) send(b []byte, flush bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.err != nil {
		return
	}
	if !flush && o.w.Size() < largeBuffer {
		if o.flushLocked(); o.err != nil {
			return
		}
		o.w = bufio.NewWriterSize(o.raw, largeBuffer)
	}
	o.w.Write(b)
	o.w.WriteByte('\n')
	switch {
	case flush:
		o.flushLocked()
	case !o.pending:
		o.pending = true
		o.timer.Reset(deltaWindow)
	}
}

func (o *output) flushPending() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending && !o.closed {
		o.flushLocked()
	}
}

func (o *output) flushLocked() {
	o.pending = false
	if o.err == nil {
		o.err = o.w.Flush()
	}
}

// close flushes what is buffered; later lines are dropped.
func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.closed = true
		o.timer.Stop()
		o.flushLocked()
	}
	return o.err
}
