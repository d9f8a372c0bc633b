package rpc

import (
	"bufio"
	"io"
	"sync"
)

// output is the only writer of the server's output. Lines are written
// whole under one lock, so they never interleave. A response (send) is
// flushed at once; events (buffer) are flushed by their subscription when
// it has delivered everything queued (flush), so the deltas one read of
// the model's stream brought go out in one write, and no line that is
// ready waits for one that is not.
//
// Writing on the caller's goroutine (the session's subscriber, the command
// loop) rather than handing lines to a writer goroutine matters: waking a
// sleeping goroutine for every delta costs more than encoding it.
type output struct {
	mu     sync.Mutex
	raw    io.Writer
	w      *bufio.Writer
	closed bool  // no more lines
	err    error // the first write error; later lines are dropped
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
	return &output{raw: w, w: bufio.NewWriterSize(w, smallBuffer)}
}

// send writes one encoded line (without its newline) and flushes it.
func (o *output) send(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.write(b) {
		o.flushLocked()
	}
}

// buffer writes one encoded line without flushing it; the caller calls
// flush when it has nothing more to write at once. stream marks a
// streamed delta, the line that switches to the large buffer.
func (o *output) buffer(b []byte, stream bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if stream && o.w.Size() < largeBuffer && !o.closed {
		if o.flushLocked(); o.err != nil {
			return
		}
		o.w = bufio.NewWriterSize(o.raw, largeBuffer)
	}
	o.write(b)
}

// write adds b and its newline to the buffer, and reports whether it did.
func (o *output) write(b []byte) bool {
	if o.closed || o.err != nil {
		return false
	}
	o.w.Write(b)
	o.w.WriteByte('\n')
	return true
}

// flush writes out what is buffered.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.flushLocked()
	}
}

func (o *output) flushLocked() {
	if o.err == nil && o.w.Buffered() > 0 {
		o.err = o.w.Flush()
	}
}

// close flushes what is buffered; later lines are dropped.
func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.closed = true
		o.flushLocked()
	}
	return o.err
}
