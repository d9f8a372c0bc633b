package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
)

// Bash default limits.
const (
	DefaultTimeout   = 2 * time.Minute
	DefaultMaxOutput = 50 << 10
)

// maxTimeout is the longest timeout argument honoured.
const maxTimeout = 24 * time.Hour

// waitDelay is how long Run waits for the output pipe to close once the
// shell has exited or been killed. A background child that keeps the pipe
// open (`server &`) would otherwise hold the call forever; past this delay
// the pipe is closed and what it writes later is lost.
const waitDelay = 500 * time.Millisecond

// Bash is the bash tool: it runs a command with `bash -c` (or `sh -c` where
// bash is missing) in Dir, with no standard input, and returns its combined
// standard output and error.
//
// The shell runs in its own process group. On timeout or when ctx is done
// the whole group is killed with SIGKILL, so children (`make` and its
// compilers, `sleep 30 & wait`) die with it and an abort takes effect in
// milliseconds; SIGKILL rather than SIGTERM because a process trapping
// SIGTERM would delay the abort. Background processes that outlive a command
// which exited normally are left running: starting a server is legitimate.
//
// Output longer than MaxOutput keeps its tail, where errors and summaries
// are, behind a notice of how much was dropped. A non-zero exit, a death by
// signal or a timeout is a Result with IsError set and the status in the
// text; only an abort (ctx done) or a failure to start is a Go error.
type Bash struct {
	Dir string
	// Timeout bounds a command that gives no timeout argument; 0 = 2
	// minutes. The model's timeout argument replaces it, longer or shorter
	// (up to a day: the user can always abort).
	Timeout time.Duration
	// MaxOutput is how many bytes of output are returned; 0 = 50 KiB.
	MaxOutput int
}

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Shell command line, run with bash -c in the working directory."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Timeout in seconds. Default 120."}
  },
  "required": ["command"]
}`

// Spec describes bash to the model.
func (b Bash) Spec() llm.Tool {
	return llm.Tool{
		Name: "bash",
		Description: fmt.Sprintf("Run a shell command (bash -c) in the working directory and return its combined stdout and stderr. "+
			"There is no standard input, so interactive commands fail: pass flags that avoid prompts. "+
			"Output over %s keeps only its last part. Non-zero exit codes are reported. "+
			"The command is killed, with its children, after the timeout (default %s); for long-running "+
			"servers, start them in the background with output redirected to a file.",
			size(int64(b.maxOutput())), b.timeout()),
		Parameters: json.RawMessage(bashSchema),
	}
}

func (b Bash) maxOutput() int { return orDefault(b.MaxOutput, DefaultMaxOutput) }

func (b Bash) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return DefaultTimeout
}

// Run runs the command.
func (b Bash) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Command *string  `json:"command"`
		Timeout *float64 `json:"timeout"`
	}
	if err := decode("bash", args, &a); err != nil {
		return Result{}, err
	}
	switch {
	case a.Command == nil:
		return Result{}, errors.New("bash: missing required argument \"command\"")
	case strings.TrimSpace(*a.Command) == "":
		return Result{}, errors.New("bash: \"command\" is empty")
	case a.Timeout != nil && !(*a.Timeout > 0):
		return Result{}, fmt.Errorf("bash: \"timeout\" must be a positive number of seconds, not %v", *a.Timeout)
	}
	limit := b.timeout()
	if a.Timeout != nil {
		// Clamped so that a huge number cannot overflow into a negative
		// duration, which would time out at once.
		limit = time.Duration(min(*a.Timeout, maxTimeout.Seconds()) * float64(time.Second))
	}
	dir := b.Dir
	if dir != "" {
		var err error
		if dir, err = resolve("bash", "", dir); err != nil {
			return Result{}, err
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return Result{}, fmt.Errorf("bash: working directory %s does not exist or is not a directory", dir)
		}
	}
	shell, err := exec.LookPath("bash")
	if err != nil {
		if shell, err = exec.LookPath("sh"); err != nil {
			return Result{}, errors.New("bash: neither bash nor sh was found in PATH")
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("bash: %w", err)
	}

	run, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out := &tail{max: b.maxOutput()}
	cmd := exec.CommandContext(run, shell, "-c", *a.Command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out // one pipe, so the two streams interleave as written
	cmd.WaitDelay = waitDelay
	group(cmd)
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("bash: cannot start %s: %v", shell, err)
	}
	err = cmd.Wait()
	if run.Err() != nil {
		// The shell is dead; children that left the group's pipe alone
		// would survive it without this.
		killGroup(cmd.Process.Pid)
	}

	body, dropped := out.text()
	var sb strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&sb, "[output cut: %s dropped, showing the last %s]\n", size(dropped), size(int64(len(body))))
	}
	sb.WriteString(body)
	if body == "" {
		sb.WriteString("(no output)")
	}
	note := func(format string, v ...any) {
		if !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteString("\n")
		}
		sb.WriteString("\n")
		fmt.Fprintf(&sb, format, v...)
	}

	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("bash: aborted (%w); the command and its children were killed. Output so far:\n%s", ctx.Err(), sb.String())
	}
	st := cmd.ProcessState
	if st == nil {
		return Result{}, fmt.Errorf("bash: %v", err)
	}
	// A command that exited on its own just before the deadline keeps
	// its real status.
	if run.Err() != nil && !st.Exited() {
		note("[timed out after %s; the command and its children were killed. Pass a larger \"timeout\" (seconds) "+
			"if it needs longer, or run it in the background with output redirected to a file]", limit)
		return Result{Content: []llm.Content{llm.Text(sb.String())}, IsError: true}, nil
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		note("[the command exited but a background process kept its output open; later output was not captured]")
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !errors.Is(err, exec.ErrWaitDelay) {
		return Result{}, fmt.Errorf("bash: %v", err)
	}
	switch {
	case st.Success():
		return text(sb.String()), nil
	case st.ExitCode() >= 0:
		note("exit code %d", st.ExitCode())
	default:
		note("killed: %s", signalOf(st))
	}
	return Result{Content: []llm.Content{llm.Text(sb.String())}, IsError: true}, nil
}

// tail is an io.Writer that keeps the last max bytes written and counts
// the rest, so a command printing gigabytes costs bounded memory.
type tail struct {
	mu    sync.Mutex // exec writes from one goroutine, but Wait may return before it stops (WaitDelay)
	max   int
	buf   []byte
	total int64
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	// Trim only when twice over, so trimming is amortised over writes.
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// text returns the kept output and how many bytes before it were dropped.
// A cut output starts at a line boundary when one is near, so the model
// does not read half a line as a whole one.
func (t *tail) text() (string, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	if int64(len(b)) < t.total {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < 1024 && i+1 < len(b) {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), t.total - int64(len(b))
}
