package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// settled is the event that ends a prompt: rally's agent_settled, or
// agent_end for an agent without it (pi).
func settled(a Agent) string {
	if a.Pi {
		return "agent_end"
	}
	return "agent_settled"
}

// spawn starts a's RPC mode in a fresh scratch directory.
func (r *runner) spawn(ctx context.Context, a Agent, t tuning, args ...string) (*proc, error) {
	cmd, err := a.command(ctx, r.scratch(), r.fake.URL, t, args...)
	if err != nil {
		return nil, err
	}
	return startProc(cmd)
}

// start measures cold start: --version, spawn to the first get_state
// response, and the peak RSS of such a process.
func (r *runner) start(ctx context.Context) []Row {
	r.progress("cold start")
	return r.both(func(a Agent) []Row {
		var version, state, rss []float64
		var verr, serr error
		for range r.cfg.Runs {
			cmd := exec.CommandContext(ctx, a.Argv[0], append(a.Argv[1:len(a.Argv):len(a.Argv)], "--version")...)
			cmd.Env = cleanEnv("HOME=" + r.cfg.Dir)
			t0 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				verr = fmt.Errorf("--version: %w: %.200s", err, out)
				break
			}
			version = append(version, ms(time.Since(t0)))
		}
		for range r.cfg.Runs {
			t0 := time.Now()
			p, err := r.spawn(ctx, a, tuning{}, "--no-session")
			if err == nil {
				var resp response
				resp, err = p.call("s", `{"id":"s","type":"get_state"}`)
				if err == nil && !resp.Success {
					err = fmt.Errorf("get_state: %s", resp.Error)
				}
			}
			if err != nil {
				serr = err
				break
			}
			state = append(state, ms(time.Since(t0)))
			kib, rerr := peakRSS(p.cmd.Process.Pid)
			_ = p.stop()
			if rerr != nil {
				serr = rerr
				break
			}
			rss = append(rss, kib/1024)
		}
		return []Row{
			// Issue 25's targets: a start like a small Go program's.
			{Group: "start", Name: "--version", Unit: "ms", Rally: orErr(version, verr), Target: atMost(6)},
			{Group: "start", Name: "RPC spawn → first get_state", Unit: "ms", Rally: orErr(state, serr), Target: atMost(8)},
			{Group: "start", Name: "peak RSS of that process, to its first get_state", Unit: "MiB", Rally: orErr(rss, serr), Target: atMost(12)},
		}
	})
}

func orErr(xs []float64, err error) Stat {
	if err != nil {
		return failed(err)
	}
	return stat(xs)
}

// stream measures deltas per second end to end (prompt written to the
// prompt's last event read) in both event modes, with the bytes and the
// CPU the agent spends per delta.
func (r *runner) stream(ctx context.Context) []Row {
	var rows []Row
	for _, partial := range []bool{false, true} {
		for _, n := range r.sizes(1000, 10000, 50000) {
			mode := "delta-only"
			if partial {
				mode = "default (partial)"
			}
			r.progress("stream %d deltas, %s mode", n, mode)
			rows = append(rows, r.both(func(a Agent) []Row { return r.deltas(ctx, a, n, partial) })...)
		}
	}
	return rows
}

func (r *runner) deltas(ctx context.Context, a Agent, n int, partial bool) []Row {
	mode := "delta-only"
	if partial {
		mode = "default"
	}
	name := fmt.Sprintf("%s mode, %dk deltas", mode, n/1000)
	rows := []Row{
		{Group: "stream", Name: name + ": deltas/s", Unit: "deltas/s", Higher: true},
		{Group: "stream", Name: name + ": stdout bytes/delta", Unit: "B"},
		{Group: "stream", Name: name + ": agent CPU/delta", Unit: "µs"},
		{Group: "stream", Name: name + ": bench CPU/delta (reading the output)", Unit: "µs"},
	}
	switch {
	case !partial && n == 50000:
		rows[0].Target = atLeast(150000)
	case partial && n == 10000:
		rows[0].Target = atLeast(50000)
	}
	fail := func(err error) []Row {
		for i := range rows {
			rows[i].Rally = failed(err)
		}
		return rows
	}
	// The default mode's output grows with the square of the answer: at
	// 50,000 deltas it is gigabytes, so it runs fewer times.
	runs := r.cfg.Runs
	limit := 2 * time.Minute
	if partial && n >= 10000 {
		runs = max(1, min(runs, 3*10000/n))
		limit = 4 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	r.fake.use(recorded(words(n)))
	p, err := r.spawn(ctx, a, tuning{}, "--no-session")
	if err != nil {
		return fail(err)
	}
	defer p.stop()
	if !partial {
		resp, err := p.call("e", `{"id":"e","type":"set_event_options","partial":false}`)
		if err != nil {
			return fail(err)
		}
		if !resp.Success {
			return fail(fmt.Errorf("unsupported: %s", resp.Error))
		}
	}
	var rate, perByte []float64
	var cpu time.Duration // over every run: /proc counts in 10 ms ticks
	cpuOK, deltas := true, 0
	end := settled(a)
	self0, selfOK := selfCPU()
	for range runs {
		b0 := p.out.n
		c0, ok0 := cpuTime(p.cmd.Process.Pid)
		t0 := time.Now()
		if err := p.send(`{"type":"prompt","message":"go"}`); err != nil {
			return fail(err)
		}
		got := 0
		for {
			t, err := p.nextType()
			if err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("gave up after %s: %w", limit, err)
				}
				return fail(err)
			}
			if t == "message_update" {
				got++
			} else if t == end {
				break
			}
		}
		d := time.Since(t0)
		if got < n {
			return fail(fmt.Errorf("%d message_update lines for %d deltas", got, n))
		}
		rate = append(rate, float64(got)/d.Seconds())
		perByte = append(perByte, float64(p.out.n-b0)/float64(got))
		c1, ok1 := cpuTime(p.cmd.Process.Pid)
		cpu, cpuOK, deltas = cpu+c1-c0, cpuOK && ok0 && ok1, deltas+got
	}
	self1, selfOK1 := selfCPU()
	rows[0].Rally, rows[1].Rally = stat(rate), stat(perByte)
	rows[2].Rally, rows[2].Note = Stat{Err: "no /proc/<pid>/stat on this system"}, ""
	if cpuOK {
		rows[2].Rally = single(float64(cpu.Microseconds()) / float64(deltas))
		rows[2].Note = fmt.Sprintf("total over %d run(s), 10 ms resolution", runs)
	}
	rows[3].Rally = Stat{Err: "no getrusage on this system"}
	if selfOK && selfOK1 {
		rows[3].Rally = single(float64((self1 - self0).Microseconds()) / float64(deltas))
		rows[3].Note = fmt.Sprintf("the bench process over the same %d run(s), with the fake LLM's serving", runs)
	}
	if runs < r.cfg.Runs {
		rows[0].Note = fmt.Sprintf("%d run(s): output grows with the square of the answer", runs)
	}
	return rows
}

// abort measures abort_retry during a retry wait and abort during a
// stream: from writing the command to reading auto_retry_end, or the
// aborted message's message_end.
func (r *runner) abort(ctx context.Context) []Row {
	r.progress("abort latency over RPC")
	rows := r.both(func(a Agent) []Row {
		retryWait, stream := r.abortRPC(ctx, a)
		return []Row{
			{Group: "abort", Name: "abort_retry during a wait, over RPC", Unit: "ms", Rally: retryWait},
			{Group: "abort", Name: "abort during a stream, over RPC", Unit: "ms", Rally: stream},
		}
	})
	r.progress("abort latency in process")
	return append(rows, r.abortInProcess(ctx)...)
}

func (r *runner) abortRPC(ctx context.Context, a Agent) (retryWait, stream Stat) {
	var waits, streams []float64
	var werr, serr error
	r.fake.use(llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}))
	for range r.cfg.Runs {
		d, err := r.abortOnce(ctx, a, tuning{baseDelayMs: 5000}, "auto_retry_start", `{"type":"abort_retry"}`, "auto_retry_end")
		if err != nil {
			werr = err
			break
		}
		waits = append(waits, ms(d))
	}
	r.fake.use(llmtest.New(llmtest.Step{Text: strings.TrimSpace(strings.Repeat("slow ", 2000)), Chunks: 2000, Delay: 2 * time.Millisecond}))
	for range r.cfg.Runs {
		d, err := r.abortOnce(ctx, a, tuning{}, "message_update", `{"type":"abort"}`, "message_end")
		if err != nil {
			serr = err
			break
		}
		streams = append(streams, ms(d))
	}
	return orErr(waits, werr), orErr(streams, serr)
}

// abortOnce prompts a fresh process, waits for the event when, writes cmd
// and returns the time until the event until is read.
func (r *runner) abortOnce(ctx context.Context, a Agent, t tuning, when, cmd, until string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := r.spawn(ctx, a, t, "--no-session")
	if err != nil {
		return 0, err
	}
	defer p.stop()
	if err := p.send(`{"type":"prompt","message":"go"}`); err != nil {
		return 0, err
	}
	if _, err := p.event(when); err != nil {
		return 0, fmt.Errorf("waiting for %s: %w", when, err)
	}
	t0 := time.Now()
	if err := p.send(cmd); err != nil {
		return 0, err
	}
	if _, err := p.event(until); err != nil {
		return 0, fmt.Errorf("waiting for %s: %w", until, err)
	}
	return time.Since(t0), nil
}

// recovery measures how close to the policy's wait an agent recovers: the
// time from the fake LLM's first failure to reading the successful
// answer, divided by the wait a correct agent must make, and the requests
// it sent against the minimum of two.
func (r *runner) recovery(ctx context.Context) []Row {
	var rows []Row
	for _, hint := range []bool{true, false} {
		what := "503 overload, policy backoff 1 s"
		if hint {
			what = "429 with retry-after: 2 (backoff base 0.5 s)"
		}
		r.progress("recovery: %s", what)
		rows = append(rows, r.both(func(a Agent) []Row {
			eff, reqs := r.recoverOnce(ctx, a, hint)
			return []Row{
				{Group: "recovery", Name: what + ": time ÷ required wait", Unit: "×", Rally: eff, Target: below(1.01)},
				{Group: "recovery", Name: what + ": requests beyond the minimum of 2", Unit: "requests", Rally: reqs, Target: exactly99(0)},
			}
		})...)
	}
	return rows
}

func (r *runner) recoverOnce(ctx context.Context, a Agent, hint bool) (eff, reqs Stat) {
	wait, t := time.Second, tuning{baseDelayMs: 1000}
	if hint {
		wait, t = 2*time.Second, tuning{baseDelayMs: 500}
	}
	runs := r.runs(wait+time.Second, 30*time.Second)
	var effs, counts []float64
	for range runs {
		g := newGate(wait, hint)
		r.fake.use(g)
		d, err := func() (time.Time, error) {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			p, err := r.spawn(ctx, a, t, "--no-session")
			if err != nil {
				return time.Time{}, err
			}
			defer p.stop()
			if err := p.send(`{"type":"prompt","message":"go"}`); err != nil {
				return time.Time{}, err
			}
			for {
				l, err := p.event("message_end")
				if err != nil {
					return time.Time{}, fmt.Errorf("waiting for the answer: %w", err)
				}
				if bytes.Contains(l, []byte(`"stopReason":"stop"`)) && bytes.Contains(l, []byte(`"role":"assistant"`)) {
					return time.Now(), nil
				}
			}
		}()
		if err != nil {
			return failed(err), failed(err)
		}
		failedAt, n := g.stats()
		effs = append(effs, float64(d.Sub(failedAt))/float64(wait))
		counts = append(counts, float64(n-2))
	}
	return stat(effs), stat(counts)
}

// cpuTime is a process's user and system CPU time so far, from
// /proc/<pid>/stat (Linux).
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name in parentheses may hold spaces; fields count from
	// after it: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// USER_HZ is 100 on every Linux platform Go supports.
	return time.Duration(u+s) * 10 * time.Millisecond, true
}

// peakRSS is a live process's peak resident set so far in KiB, VmHWM of
// /proc/<pid>/status (Linux). Not the rusage of the exited child: a child
// started with vfork, as os/exec does, inherits the parent's high-water
// mark when it execs, so its ru_maxrss is at least the bench's own.
func peakRSS(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("peak RSS: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("peak RSS: %q: %w", l, err)
			}
			return kib, nil
		}
	}
	return 0, fmt.Errorf("peak RSS: no VmHWM in /proc/%d/status", pid)
}
