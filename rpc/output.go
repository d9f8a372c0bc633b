package rpc

import (
	"bufio"
	"io"
	"sync"
)

// outQueue is how many encoded lines may wait for the writer before
// producers wait. The session's subscriber buffer sits in front of it.
const outQueue = 1024

// output is the only writer of the server's output: one goroutine, so
// lines never interleave. A line marked flush (responses, every event but
// the streaming deltas) is flushed at once; deltas are flushed as soon as
// nothing more is queued, so a burst of them costs one write and a single
// delta is never held back.
type output struct {
	ch   chan line
	done chan struct{}

	mu     sync.Mutex // guards closed against send
	closed bool
	err    error // the first write error; later lines are dropped
}

type line struct {
	b     []byte
	flush bool
}

func newOutput(w io.Writer) *output {
	o := &output{ch: make(chan line, outQueue), done: make(chan struct{})}
	go o.run(bufio.NewWriterSize(w, 64<<10))
	return o
}

// send queues one encoded line (without its newline). It never blocks
// once the output is closed.
func (o *output) send(b []byte, flush bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.ch <- line{b, flush}
}

func (o *output) run(w *bufio.Writer) {
	defer close(o.done)
	write := func(l line) {
		if o.err != nil {
			return
		}
		w.Write(l.b)
		w.WriteByte('\n')
		if l.flush {
			o.err = w.Flush()
		}
	}
	for l := range o.ch {
		write(l)
	drain:
		for {
			select {
			case l, ok := <-o.ch:
				if !ok {
					break drain
				}
				write(l)
			default:
				break drain
			}
		}
		if o.err == nil {
			o.err = w.Flush()
		}
	}
	if o.err == nil {
		o.err = w.Flush()
	}
}

// close flushes everything queued and stops the writer.
func (o *output) close() error {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.ch)
	}
	o.mu.Unlock()
	<-o.done
	return o.err
}
