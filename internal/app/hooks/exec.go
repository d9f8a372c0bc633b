package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/internal/proc"
)

// markVar names the environment variable that marks the processes of one
// hook run (proc.KillMarked).
const markVar = "RALLY_HOOK_RUN"

// outputCap is how much of a hook's stdout and stderr is kept (the end of
// each): enough for an error message, never a flood in the log.
const outputCap = 4 << 10

// waitDelay bounds how long a finished or killed hook's stdout and stderr
// may stay open (held by a child that left its process group).
const waitDelay = 100 * time.Millisecond

// Result is one run of a hook.
type Result struct {
	Hook     int
	Command  []string
	Event    string
	Duration time.Duration
	// ExitCode is the process's exit status; -1 when it was killed or
	// never started.
	ExitCode int
	// Stdout and Stderr are the last few KB the hook wrote.
	Stdout, Stderr string
	// Err is nil when the hook exited 0.
	Err *Error
}

// Test runs every hook that runs on e's type, once, one after the other,
// and returns what each did: `rally hooks test`. It uses the runner's
// environment and the hooks' timeouts; ctx cancels it.
func (r *Runner) Test(ctx context.Context, src Source, e Event) []Result {
	typ := typeOf(e)
	j := job{src: src, typ: typ, line: Encode(e), at: time.Now()}
	var out []Result
	for _, w := range r.workers {
		if w.on[typ] {
			out = append(out, r.run(ctx, w.i, j))
		}
	}
	return out
}

// run starts hook i for j and waits for it, at most its timeout.
func (r *Runner) run(ctx context.Context, i int, j job) Result {
	h := r.cfg.Hooks[i]
	res := Result{Hook: i, Command: h.Command, Event: j.typ, ExitCode: -1}
	if len(h.Command) == 0 {
		res.Err = &Error{Hook: i, Event: j.typ, Err: errors.New("no command")}
		return res
	}
	ctx, cancel := context.WithTimeoutCause(ctx, h.Timeout(), ErrTimeout)
	defer cancel()

	// The mark every process of this run inherits, so that what the hook
	// moved out of its process group (setsid) is found and killed too.
	mark := markVar + "=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(r.runs.Add(1), 10)
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.Env = append(slices.Clip(r.env), mark,
		"RALLY_EVENT="+j.typ,
		"RALLY_SESSION_ID="+j.src.ID,
		"RALLY_SESSION_FILE="+j.src.File,
		"RALLY_EVENT_TIME="+strconv.FormatInt(j.at.UnixMilli(), 10),
	)
	cmd.Stdin = bytes.NewReader(j.line)
	var stdout, stderr tail
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = waitDelay
	proc.Group(cmd)

	start := time.Now()
	escaped := proc.Escaped() // a tool's, or another hook's, from before
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		// The hook is its process group: what it left running goes too,
		// what left the group, by its mark, and what left its session and
		// its environment too, as an orphan rally adopted (Linux).
		proc.KillGroup(cmd.Process.Pid)
		proc.KillMarked(mark)
		proc.KillEscaped(escaped)
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if r.cfg.Redact != nil {
		res.Stdout, res.Stderr = r.cfg.Redact(res.Stdout), r.cfg.Redact(res.Stderr)
	}
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil && res.ExitCode != 0:
		// Killed: say why (timeout or exit), not "signal: killed".
		err = context.Cause(ctx)
		if errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w (%v)", ErrTimeout, h.Timeout())
		}
	case errors.Is(err, exec.ErrWaitDelay) && res.ExitCode == 0:
		// It succeeded; a child it left behind held its output open.
		err = nil
	}
	if err != nil {
		res.Err = &Error{Hook: i, Command: argv0(h), Event: j.typ, Err: err}
	}
	return res
}

// tail is an io.Writer that keeps the last outputCap bytes written.
type tail struct {
	mu  sync.Mutex
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - outputCap; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.buf), "\n")
	if t.cut {
		s = "…" + s
	}
	return s
}

// cleanEnv is env without the event variables a rally run from a hook
// would inherit: each run sets its own.
func cleanEnv(env []string) []string {
	own := []string{"RALLY_EVENT", "RALLY_SESSION_ID", "RALLY_SESSION_FILE", "RALLY_EVENT_TIME", markVar}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(own, name)
	})
}
