package redistest

import (
	"bufio"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Watch records every command the server runs, those run inside scripts
// too (MONITOR). A budget test reads from it when the fleet granted each
// request, on Redis's own clock, rather than when the request reached the
// fake LLM: that arrival trails the grant by however slow the machine is
// at that moment, so a window counted over arrivals fails on a loaded
// machine while the fleet kept its budget.
type Watch struct {
	s    *Server
	conn net.Conn
	mu   sync.Mutex
	cmds [][]string
	seen chan string // PING arguments, for Commands to know it read all
	done chan struct{}
}

// Watch starts recording; it stops when the test ends.
func (s *Server) Watch() *Watch {
	s.t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		s.t.Fatalf("redistest: watch: %v", err)
	}
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("MONITOR\r\n")); err != nil {
		s.t.Fatalf("redistest: watch: %v", err)
	}
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		s.t.Fatalf("redistest: MONITOR answered %q, %v", line, err)
	}
	c.SetDeadline(time.Time{})
	w := &Watch{s: s, conn: c, seen: make(chan string, 1), done: make(chan struct{})}
	go w.read(r)
	s.t.Cleanup(func() { c.Close(); <-w.done })
	return w
}

// quoted is one argument of a MONITOR line, which Redis writes in double
// quotes with Go-compatible escapes (\" \\ \n \xHH).
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

func (w *Watch) read(r *bufio.Reader) {
	defer close(w.done)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		var args []string
		for _, q := range quoted.FindAllString(line, -1) {
			a, err := strconv.Unquote(q)
			if err != nil {
				a = q
			}
			args = append(args, a)
		}
		if len(args) == 2 && strings.EqualFold(args[0], "PING") && strings.HasPrefix(args[1], "redistest-") {
			w.seen <- args[1]
			continue
		}
		w.mu.Lock()
		w.cmds = append(w.cmds, args)
		w.mu.Unlock()
	}
}

// Commands returns what the server ran so far, each as its arguments
// ("HSET", key, field, value, ...). It sends a PING of its own and waits
// to see it, so nothing the server ran before the call is missing.
func (w *Watch) Commands() [][]string {
	w.s.t.Helper()
	mark := "redistest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	c, err := net.DialTimeout("tcp", w.s.Addr, time.Second)
	if err != nil {
		w.s.t.Fatalf("redistest: watch: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING " + mark + "\r\n")); err != nil {
		w.s.t.Fatalf("redistest: watch: %v", err)
	}
	select {
	case got := <-w.seen:
		if got != mark {
			w.s.t.Fatalf("redistest: watch saw PING %q, want %q", got, mark)
		}
	case <-w.done:
		w.s.t.Fatal("redistest: the MONITOR connection closed")
	case <-time.After(30 * time.Second):
		w.s.t.Fatal("redistest: MONITOR did not show a PING within 30s")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.cmds)
}

// BudgetGrants are the times, on Redis's clock and in order, at which the
// fleet's budget of requests per window let each request go: every
// admission writes the request level left after it and its time ("r",
// "ts" on a budget key), and a level below zero is a debt the request
// waits out at the bucket's refill rate. The rate is the one fleet.Budget
// documents: a burst of a tenth of the limit (rounded up), the rest
// refilled evenly over the window.
func (w *Watch) BudgetGrants(requests int, window time.Duration) []time.Time {
	w.s.t.Helper()
	burst := (requests + 9) / 10
	refill := requests - burst
	if refill <= 0 {
		refill = requests
	}
	perMs := float64(refill) / float64(window.Milliseconds())
	var grants []time.Time
	for _, c := range w.Commands() {
		if len(c) < 2 || !strings.EqualFold(c[0], "HSET") || !strings.Contains(c[1], "budget:") {
			continue
		}
		var level, at float64
		var haveLevel, haveAt bool
		for i := 2; i+1 < len(c); i += 2 {
			v, err := strconv.ParseFloat(c[i+1], 64)
			switch {
			case c[i] == "r" && err == nil:
				level, haveLevel = v, true
			case c[i] == "ts" && err == nil:
				at, haveAt = v, true
			}
		}
		if !haveLevel || !haveAt {
			continue // a refund, which grants nothing
		}
		ms := at + math.Max(0, -level/perMs)
		grants = append(grants, time.UnixMicro(int64(ms*1000)))
	}
	slices.SortFunc(grants, time.Time.Compare)
	return grants
}

// Early is the first of arrivals (any order) that came before the grant
// of the same rank: every request that waits for its grant arrives after
// it, so the k-th arrival is never before the k-th grant. It returns the
// rank, or -1 when none was early. slack covers the clocks' granularity
// (Redis's milliseconds).
func Early(arrivals, grants []time.Time, slack time.Duration) int {
	a := slices.Clone(arrivals)
	slices.SortFunc(a, time.Time.Compare)
	for k := range min(len(a), len(grants)) {
		if a[k].Add(slack).Before(grants[k]) {
			return k
		}
	}
	return -1
}
