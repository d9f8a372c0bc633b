package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/proc"
	"github.com/rally-agent/rally/llm"
)

// DefaultTimeout bounds a bash command that gives no timeout.
const DefaultTimeout = 2 * time.Minute

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
// On Linux the kernel also kills the shell when rally dies (a parent-death
// signal), so a command cut short by a crash or kill -9 does not carry on
// to its side effects; with Procs set, the groups of commands whose
// background processes outlive them are killed when the program exits.
//
// Output over MaxOutput bytes or MaxLines lines keeps its tail, where
// errors and summaries are, behind a note of what was cut; the whole
// output is then saved to a file in the temporary directory that the note
// names, for read to page through. A non-zero exit, a death by signal or a
// timeout is a Result with IsError set and the status in the text; only
// an abort (ctx done) or a failure to start is a Go error.
type Bash struct {
	Dir string
	// Timeout bounds a command that gives no timeout argument; 0 = 2
	// minutes. The model's timeout argument replaces it, longer or shorter
	// (up to a day: the user can always abort).
	Timeout time.Duration
	// MaxOutput is how many bytes of output are returned; 0 = 50 KiB.
	MaxOutput int
	// MaxLines is how many lines of output are returned; 0 = 2000.
	MaxLines int
	// Env is the commands' environment; nil is the process's. A program
	// passes its own environment without its secrets.
	Env []string
	// Deny lists files a command line may not name (see Options.Deny).
	Deny []string
	// Procs, when set, tracks the commands' process groups.
	Procs *Procs
	// TempDir is where a cut output is saved whole; "" is os.TempDir().
	TempDir string
	// Start, when set, starts each command and returns its wait, in
	// place of cmd.Start and cmd.Wait: the program confines commands
	// with it (internal/sandbox). A Start error is a failure to start.
	Start func(cmd *exec.Cmd) (wait func() error, err error)
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
			"Output over %s or %d lines keeps only its last part (the whole output is saved to a file you can read). Non-zero exit codes are reported. "+
			"The command is killed, with its children, after the timeout (default %s); for long-running "+
			"servers, start them in the background with output redirected to a file.",
			size(int64(b.maxOutput())), b.maxLines(), b.timeout()),
		Parameters: json.RawMessage(bashSchema),
	}
}

func (b Bash) maxOutput() int { return orDefault(b.MaxOutput, DefaultMaxBytes) }
func (b Bash) maxLines() int  { return orDefault(b.MaxLines, DefaultMaxLines) }

func (b Bash) start(cmd *exec.Cmd) (wait func() error, err error) {
	if b.Start != nil {
		return b.Start(cmd)
	}
	return cmd.Wait, cmd.Start()
}

// findShell is bash, or sh where bash is missing.
func findShell() (string, error) {
	if shell, err := exec.LookPath("bash"); err == nil {
		return shell, nil
	}
	if shell, err := exec.LookPath("sh"); err == nil {
		return shell, nil
	}
	return "", errors.New("bash: neither bash nor sh was found in PATH")
}

// launch runs `shell -c command` in dir, in a process group of its own
// (started by start, so under the sandbox when there is one), with its
// output captured and the group tracked in Procs, and waits for it. When
// ctx ends the shell is killed and so is its group, children that left
// the group's pipe alone included. It returns the finished command, its
// output (closed) and Wait's error; startErr is a command that never ran.
func (b Bash) launch(ctx context.Context, shell, command, dir string) (cmd *exec.Cmd, out *capture, waitErr, startErr error) {
	out = &capture{max: b.maxOutput(), maxLines: b.maxLines(), dir: b.TempDir, spillMax: DefaultSpillBytes}
	cmd = exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir = dir
	cmd.Env = b.Env
	cmd.Stdout, cmd.Stderr = out, out // one pipe, so the two streams interleave as written
	cmd.WaitDelay = waitDelay
	proc.Group(cmd)
	wait, err := b.start(cmd)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bash: cannot start %s: %v", shell, err)
	}
	pid := cmd.Process.Pid
	if b.Procs != nil && !b.Procs.start(pid) {
		proc.KillGroup(pid)
		wait()
		out.close()
		return nil, nil, nil, errors.New("bash: not run: rally is shutting down (the command was killed as it started)")
	}
	waitErr = wait()
	if ctx.Err() != nil {
		proc.KillGroup(pid)
	}
	if b.Procs != nil {
		b.Procs.exited(pid)
	}
	out.close()
	return cmd, out, waitErr, nil
}

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
	shell, err := findShell()
	if err != nil {
		return Result{}, err
	}
	if err := deny(b.Deny).mention("bash", dir, *a.Command, b.Env); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("bash: %w", err)
	}

	run, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd, out, err, startErr := b.launch(run, shell, *a.Command, dir)
	if startErr != nil {
		return Result{}, startErr
	}

	body, cut := out.text()
	var sb strings.Builder
	if cut != "" {
		sb.WriteString(cut + "\n")
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
		note("killed: %s", proc.Describe(st))
	}
	return Result{Content: []llm.Content{llm.Text(sb.String())}, IsError: true}, nil
}
