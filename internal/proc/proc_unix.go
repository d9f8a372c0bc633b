//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Group puts cmd, made by exec.CommandContext and not yet started, in a
// process group of its own led by its process, makes cancellation of the
// context kill the whole group, not just that process, and on Linux has
// the kernel kill the process when rally dies (see deathSignal). It
// replaces cmd.SysProcAttr and cmd.Cancel.
//
// The group outlives its leader while a member runs: callers kill it with
// KillGroup once the command has ended, or watch it with GroupAlive.
func Group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	deathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		err := KillGroup(cmd.Process.Pid)
		if errors.Is(err, syscall.ESRCH) {
			// Nothing left to kill: exec then reports the command's own
			// outcome, not the cancellation.
			return os.ErrProcessDone
		}
		return err
	}
}

// KillGroup sends SIGKILL to every process in the group led by pid. It
// fails with syscall.ESRCH when the group has no member left.
func KillGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// GroupAlive reports whether the process group led by pid has a member
// left. EPERM means it has one we may not signal: alive, and not ours to
// kill, which KillGroup will find out.
func GroupAlive(pid int) bool {
	return !errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

// Describe says how a process ended: "signal killed" when a signal ended
// it, otherwise what st.String says ("exit status 1").
func Describe(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return st.String()
}
