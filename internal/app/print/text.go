// Package print is rally's print mode (-p): the answer as text on stdout with
// notices on stderr, or every event as a JSON line (--mode json).
package print

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/rpc/wire"
	"github.com/rally-agent/rally/session"
)

// Text is print mode: the answer on stdout, notices on stderr. On a
// terminal the answer streams as it arrives; into a pipe or file each
// message is written when it ends, so a partial answer that a retry throws
// away never reaches the output twice.
type Text struct {
	mu    sync.Mutex
	out   *bufio.Writer
	err   io.Writer
	live  bool
	wrote bool // something of the current message reached out
	any   bool // any answer text was written
	// tty: stderr is a terminal, so a retry wait counts down in place.
	tty  bool
	wait *countdown // the countdown on screen, if any
	// reset is the wait for a usage limit's reset going on, if any.
	reset *resetWait
	// sum, with --verbose, is the last line's count.
	sum *summary
	now func() time.Time
}

// Options are how print mode writes. The zero value writes for pipes:
// each answer whole at its end, one plain line per notice, no summary.
type Options struct {
	Live    bool             // stdout is a terminal: the answer streams as it arrives
	TTY     bool             // stderr is a terminal: a retry wait counts down in place
	Verbose bool             // a summary line at the end
	Now     func() time.Time // nil: time.Now
}

// NewText writes print mode's text output: the answer to out, notices to errw.
func NewText(out, errw io.Writer, o Options) *Text {
	t := &Text{out: bufio.NewWriter(out), err: errw, live: o.Live, tty: o.TTY, now: o.Now}
	if t.now == nil {
		t.now = time.Now
	}
	if o.Verbose {
		t.sum = &summary{start: t.now()}
	}
	return t
}

// Event writes what e shows; a session subscribes it.
func (t *Text) Event(e session.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wait != nil { // whatever comes next ends the wait
		t.wait.end()
		t.wait = nil
	}
	if t.sum != nil {
		t.sum.add(e)
	}
	if t.resetEvent(e) {
		return
	}
	switch e := e.(type) {
	case session.MessageUpdateEvent:
		if t.live && e.Assistant != nil && e.Assistant.Type == llm.EventTextDelta {
			t.separate()
			// Only a terminal obeys controls; a pipe gets the answer
			// byte-exact (the whole message, at its end, below).
			t.out.WriteString(termsafe.String(e.Assistant.Delta))
			t.out.Flush()
			t.wrote = true
		}
	case session.MessageEndEvent:
		m := e.Message
		if m.Role != llm.Assistant {
			return
		}
		if !t.live && m.StopReason != llm.Error && m.StopReason != llm.Aborted {
			if text := m.TextOf(); text != "" {
				t.separate()
				t.out.WriteString(text)
				t.wrote = true
			}
		}
		if t.wrote {
			t.out.WriteString("\n")
			t.out.Flush()
			t.wrote = false
		}
	case session.MessageDiscardedEvent:
		if t.live && e.Message.TextOf() != "" {
			fmt.Fprintln(t.err, "rally: the partial answer above was cut off and is discarded; the retry starts over")
		}
	case session.StreamResumedEvent:
		fmt.Fprintln(t.err, resumedLine(e))
	case session.ToolExecutionStartEvent:
		t.out.Flush()
		fmt.Fprintf(t.err, "→ %s %s\n", termsafe.String(e.ToolName), termsafe.String(Clip(string(e.Args), 120)))
	case session.ToolExecutionEndEvent:
		if e.IsError {
			fmt.Fprintf(t.err, "✗ %s failed\n", termsafe.String(e.ToolName))
		}
	case session.AutoRetryStartEvent:
		full := fmt.Sprintf("rally: retrying (%d/%d) in %s: %s", e.Attempt, e.MaxAttempts, seconds(e.DelayMs), termsafe.String(Clip(e.ErrorMessage, 200)))
		if t.tty && e.DelayMs >= 1000 {
			t.out.Flush()
			t.wait = startCountdown(&t.mu, t.err, e, full)
		} else {
			fmt.Fprintln(t.err, full)
		}
		if e.SwitchedTo != "" {
			fmt.Fprintf(t.err, "rally: switched to %s\n", termsafe.String(e.SwitchedTo))
		}
	case session.AutoRetryEndEvent:
		if e.Success {
			fmt.Fprintf(t.err, "rally: retry %d succeeded\n", e.Attempt)
		}
	case session.CompactionStartEvent:
		fmt.Fprintf(t.err, "rally: compacting the conversation (%s)…\n", e.Reason)
	case session.CompactionEndEvent:
		if res := e.Result; res != nil {
			fmt.Fprintf(t.err, "rally: compacted %d tokens into a summary\n", res.TokensBefore)
		} else if e.Aborted {
			fmt.Fprintln(t.err, "rally: compaction aborted")
		}
	}
}

// separate puts a blank line between two answers of one prompt.
func (t *Text) separate() {
	if !t.wrote && t.any {
		t.out.WriteString("\n")
	}
	t.any = true
}

// Finish flushes the answer; the caller prints the error itself.
func (t *Text) Finish(error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wait != nil {
		t.wait.end()
		t.wait = nil
	}
	t.out.Flush()
	if t.sum != nil {
		fmt.Fprintln(t.err, t.sum.line(t.now()))
	}
}

// seconds formats milliseconds the way the retry notice reads: "2s", "1.5s".
func seconds(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// Clip folds whitespace to single spaces and cuts s to n bytes plus "…".
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// JSON writes every event as one JSON line, in the RPC mode's shapes.
type JSON struct {
	mu  sync.Mutex
	out *bufio.Writer
	buf []byte
}

// NewJSON writes every event as one JSON line.
func NewJSON(w io.Writer) *JSON {
	return &JSON{out: bufio.NewWriterSize(w, 64<<10)}
}

// Event writes e as one line; deltas are flushed with the next other event.
func (j *JSON) Event(e session.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = append(wire.AppendEvent(j.buf[:0], e), '\n')
	j.out.Write(j.buf)
	if e.Kind() != session.MessageUpdate {
		j.out.Flush()
	}
}

// Finish flushes what is buffered.
func (j *JSON) Finish(error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.out.Flush()
}
