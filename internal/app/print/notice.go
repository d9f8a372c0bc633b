package print

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// countdown is the retry notice on a terminal: "rally: retrying (1/3) in
// 3s…" rewritten in place each second of the wait, then replaced by the
// full notice (with the error) that a pipe gets at once. The live line is
// kept short so that it never wraps: "\r" only returns to the start of
// the last screen line.
type countdown struct {
	mu   *sync.Mutex // the Text's: the line and the answer never interleave
	w    io.Writer
	stop chan struct{}
	full string
}

// startCountdown writes the first live line and ticks until end. The
// caller holds mu.
func startCountdown(mu *sync.Mutex, w io.Writer, e session.AutoRetryStartEvent, full string) *countdown {
	c := &countdown{mu: mu, w: w, stop: make(chan struct{}), full: full}
	deadline := time.Now().Add(time.Duration(e.DelayMs) * time.Millisecond)
	live := func(left time.Duration) string {
		when := "in " + left.Round(time.Second).String()
		if left < time.Second/2 {
			when = "now"
		}
		return fmt.Sprintf("\r\x1b[Krally: retrying (%d/%d) %s…", e.Attempt, e.MaxAttempts, when)
	}
	io.WriteString(w, live(time.Duration(e.DelayMs)*time.Millisecond))
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
				left := max(0, time.Until(deadline))
				mu.Lock()
				select {
				case <-c.stop: // ended while this tick waited for the lock
				default:
					io.WriteString(w, live(left))
				}
				mu.Unlock()
			}
		}
	}()
	return c
}

// end stops the ticking and leaves the full notice. The caller holds mu,
// which the ticker may be waiting for, so end does not wait for it: a
// tick that lost the race finds stop closed before it writes again.
func (c *countdown) end() {
	close(c.stop)
	fmt.Fprintf(c.w, "\r\x1b[K%s\n", c.full)
}

// summary adds up a print-mode run for --verbose's last line: tokens,
// cost, retries and wall time.
type summary struct {
	start   time.Time
	usage   llm.Usage
	calls   int
	retries int
}

func (s *summary) add(e session.Event) {
	switch e := e.(type) {
	case session.MessageEndEvent:
		if e.Message.Role == llm.Assistant {
			s.calls++
			u := e.Message.Usage
			if u == nil {
				return
			}
			s.usage.Input += u.Input
			s.usage.Output += u.Output
			s.usage.CacheRead += u.CacheRead
			s.usage.CacheWrite += u.CacheWrite
			s.usage.Cost.Total += u.Cost.Total
		}
	case session.AutoRetryStartEvent:
		s.retries++
	}
}

// line is the summary: "rally: 2 calls · 765 tokens (707 in, 58 out) ·
// $0.0012 · 1 retry · 2.3s".
func (s *summary) line(now time.Time) string {
	u := s.usage
	tokens := fmt.Sprintf("%d tokens (%d in, %d out", u.Input+u.Output+u.CacheRead+u.CacheWrite, u.Input, u.Output)
	if u.CacheRead+u.CacheWrite > 0 {
		tokens += fmt.Sprintf(", %d cache read, %d cache write", u.CacheRead, u.CacheWrite)
	}
	tokens += ")"
	parts := []string{
		plural(s.calls, "call", "calls"),
		tokens,
		fmt.Sprintf("$%.4f", u.Cost.Total),
		plural(s.retries, "retry", "retries"),
		now.Sub(s.start).Round(100 * time.Millisecond).String(),
	}
	return "rally: " + strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// resumedLine is print mode's notice of a stream continued where it
// stopped: nothing above is taken back, and nothing is sent twice.
func resumedLine(e session.StreamResumedEvent) string {
	from := "from the partial answer"
	if e.Cursor != "" {
		from = "after event " + e.Cursor
	}
	return fmt.Sprintf("rally: reconnected, resuming (retry %d) %s", e.Attempt, from)
}
