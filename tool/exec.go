package tool

import (
	"context"
	"errors"
	"strings"
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
	shell, err := findShell()
	if err != nil {
		return Shell{}, err
	}
	cmd, out, _, err := b.launch(ctx, shell, command, b.Dir)
	if err != nil && ctx.Err() != nil {
		// Cancelled before it could start (abort_bash right after bash).
		return Shell{ExitCode: -1, Cancelled: true}, nil
	}
	if err != nil {
		return Shell{}, err
	}
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
