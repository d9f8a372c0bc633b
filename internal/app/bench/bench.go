// Package bench is `rally bench`: end-to-end measurements of rally against
// the fake LLM on loopback (cold start, streaming throughput in both event
// modes, abort latency, recovery efficiency, scale, resume), optionally
// side by side with another agent that speaks the same RPC protocol.
//
// Every figure is a median, a min–max range and a p99 over repeated runs, measured from the
// outside the way a user or a client sees it: a real process, real HTTP,
// real pipes. The in-process groups (scale, journal load, abort in
// process) measure what a Go program embedding rally gets.
package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"
)

// Config says what to measure.
type Config struct {
	// Rally is the rally command to measure (`rally bench` uses its own
	// executable).
	Rally Agent
	// Compare, when set, runs the RPC measurements against this agent too.
	Compare *Agent
	// Runs is how many times each measurement repeats; 0 means 20. Slow
	// measurements (recovery, the largest sizes) repeat fewer times and
	// say so in their row.
	Runs int
	// Groups limits the run to these groups (see Groups); empty runs all.
	Groups []string
	// Quick shrinks the sizes (1k-delta answers, 100 sessions, 1k
	// messages) for a smoke run.
	Quick bool
	// Worker is the command that runs the scale measurement's sessions in
	// a process of their own (so that the fake LLM's memory is not in
	// their heap): `rally bench --scale-worker`. Empty runs scale in this
	// process.
	Worker []string
	// Progress gets a line per measurement as it starts; nil discards.
	Progress io.Writer
	// Dir is the scratch directory; empty makes a temporary one.
	Dir string
}

// Groups are the measurement groups, in the order they run.
func Groups() []string {
	return []string{"start", "stream", "abort", "recovery", "scale", "resume"}
}

// Row is one measured figure.
type Row struct {
	Group, Name string
	// Unit is what the numbers count ("ms", "deltas/s", "KiB", "×").
	Unit string
	// Higher marks a figure where more is better (throughput).
	Higher bool
	Rally  Stat
	// Other is the compared agent's figure (zero without --compare or for
	// an in-process figure).
	Other Stat
	// Target is the budget for the figure, if it has one.
	Target *Target
	Note   string
}

// Stat is a measured figure over N runs.
type Stat struct {
	N           int
	Median, P99 float64
	// Min and Max are the range of the runs: on a shared machine one
	// figure is noise, the spread says how much.
	Min, Max float64
	// Err says why there is no figure (a failure, "unsupported").
	Err string
}

// Target is a budget: Op ("<", "≤", "≥" or "=") Value, checked against the median
// or the p99.
type Target struct {
	Op    string
	Value float64
	P99   bool
}

func (t Target) String() string {
	s := fmt.Sprintf("%s %s", t.Op, num(t.Value))
	if t.P99 {
		s += " (p99)"
	}
	return s
}

// Met reports whether s meets the target; false without a figure.
func (t Target) Met(s Stat) bool {
	if s.N == 0 || s.Err != "" {
		return false
	}
	v := s.Median
	if t.P99 {
		v = s.P99
	}
	switch t.Op {
	case "<":
		return v < t.Value
	case "≤":
		return v <= t.Value
	case "=":
		return v == t.Value
	}
	return v >= t.Value
}

func below(v float64) *Target     { return &Target{Op: "<", Value: v} }
func atMost(v float64) *Target    { return &Target{Op: "≤", Value: v} }
func below99(v float64) *Target   { return &Target{Op: "<", Value: v, P99: true} }
func atLeast(v float64) *Target   { return &Target{Op: "≥", Value: v} }
func exactly99(v float64) *Target { return &Target{Op: "=", Value: v, P99: true} }

// stat summarises samples: the median and the 99th percentile (nearest
// rank, so with fewer than 100 runs it is the largest).
func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{Err: "no samples"}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	p99 := s[int(math.Ceil(0.99*float64(len(s))))-1]
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{N: len(s), Median: med, P99: p99, Min: s[0], Max: s[len(s)-1]}
}

// single is a figure measured once (a total over the runs).
func single(v float64) Stat { return Stat{N: 1, Median: v, P99: v, Min: v, Max: v} }

func failed(err error) Stat { return Stat{Err: err.Error()} }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Run measures what cfg asks for and returns the rows, in order. A
// measurement that fails gives a row with the error; the others still
// run. Run fails only when the bench cannot start at all.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if cfg.Runs <= 0 {
		cfg.Runs = 20
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "rally-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	f, err := startFake()
	if err != nil {
		return nil, err
	}
	defer f.close()
	r := &runner{cfg: cfg, fake: f}
	groups := map[string]func(context.Context) []Row{
		"start": r.start, "stream": r.stream, "abort": r.abort,
		"recovery": r.recovery, "scale": r.scale, "resume": r.resume,
	}
	var rows []Row
	for _, g := range Groups() {
		if len(cfg.Groups) > 0 && !slices.Contains(cfg.Groups, g) {
			continue
		}
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
		rows = append(rows, groups[g](ctx)...)
	}
	return rows, nil
}

// runner holds what every measurement shares.
type runner struct {
	cfg  Config
	fake *fake
	seq  int // scratch directories made
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "bench: "+format+"\n", args...)
}

// scratch is a fresh directory for one agent process.
func (r *runner) scratch() string {
	r.seq++
	return fmt.Sprintf("%s/p%d", r.cfg.Dir, r.seq)
}

// both runs measure for rally and, with --compare, for the other agent,
// and fills a row per figure it returns, in its order.
func (r *runner) both(measure func(Agent) []Row) []Row {
	rows := measure(r.cfg.Rally)
	if r.cfg.Compare == nil {
		return rows
	}
	other := measure(*r.cfg.Compare)
	for i := range rows {
		if i < len(other) {
			rows[i].Other = other[i].Rally
		}
	}
	return rows
}

// runs is cfg.Runs for a measurement that takes about per each time,
// capped so that it takes about limit in all (at least 3 runs).
func (r *runner) runs(per, limit time.Duration) int {
	n := r.cfg.Runs
	if per > 0 && time.Duration(n)*per > limit {
		n = max(3, int(limit/per))
	}
	return n
}

// sizes is a measurement's sizes: all of full, or only the first with
// Quick.
func (r *runner) sizes(full ...int) []int {
	if r.cfg.Quick {
		return full[:1]
	}
	return full
}
