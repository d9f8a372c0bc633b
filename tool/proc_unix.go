//go:build unix

package tool

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// group puts the command in a process group of its own, makes
// cancellation kill the whole group, not just the shell, and (on Linux)
// has the kernel kill the shell when rally dies.
func group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	deathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		err := killGroup(cmd.Process.Pid)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// groupAlive reports whether the process group pid has a member left.
// EPERM means it has one we may not signal: alive, and not ours to kill,
// which killGroup will find out.
func groupAlive(pid int) bool {
	return !errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

// signalOf names the signal that ended a process.
func signalOf(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return st.String()
}
