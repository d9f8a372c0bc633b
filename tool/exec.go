package tool

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/rally-agent/rally/internal/proc"
)

// Shell is the outcome of a command the user ran themselves (RPC bash,
// pi's "!" commands): its output as the model would get it, and its status
// in fields, for a client to show.
type Shell struct {
	// Output is the combined output, cut to Bash's caps (its tail kept).
	Output string
	// ExitCode is the shell's exit status; -1 when it did not exit (killed,
	// cancelled).
	ExitCode  int
	Cancelled bool
	// Truncated says Output is a cut; FullOutputPath then holds all of it.
	Truncated      bool
	FullOutputPath string
}

// Exec runs a command the user typed, in Dir with Env, in a process group
// of its own that ctx's end kills whole, like Run but with no timeout (the
// user is there to cancel) and no refusal list (it is the user's own
// command, not the model's). Only a failure to start is an error;
// cancellation is Shell.Cancelled.
func (b Bash) Exec(ctx context.Context, command string) (Shell, error) {
	if strings.TrimSpace(command) == "" {
		return Shell{}, errors.New("bash: the command is empty")
	}
	shell, err := exec.LookPath("bash")
	if err != nil {
		if shell, err = exec.LookPath("sh"); err != nil {
			return Shell{}, errors.New("bash: neither bash nor sh was found in PATH")
		}
	}
	out := &capture{max: b.maxOutput(), maxLines: b.maxLines(), dir: b.TempDir, spillMax: DefaultSpillBytes}
	cmd := exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir, cmd.Env = b.Dir, b.Env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	proc.Group(cmd)
	if err := cmd.Start(); err != nil {
		return Shell{}, fmt.Errorf("bash: cannot start %s: %v", shell, err)
	}
	pid := cmd.Process.Pid
	if b.Procs != nil && !b.Procs.start(pid) {
		proc.KillGroup(pid)
		cmd.Wait()
		out.close()
		return Shell{}, errors.New("bash: not run: rally is shutting down")
	}
	cmd.Wait()
	if ctx.Err() != nil {
		proc.KillGroup(pid)
	}
	if b.Procs != nil {
		b.Procs.exited(pid)
	}
	out.close()
	body, cut := out.text()
	r := Shell{Output: body, ExitCode: -1, Cancelled: ctx.Err() != nil, Truncated: cut != ""}
	if st := cmd.ProcessState; st != nil && st.Exited() && !r.Cancelled {
		r.ExitCode = st.ExitCode()
	}
	if r.Truncated {
		out.mu.Lock()
		if out.file != nil {
			r.FullOutputPath = out.file.Name()
		}
		out.mu.Unlock()
	}
	return r, nil
}
