//go:build unix

package hooks

import (
	"os"
	"os/exec"
	"syscall"
)

// group starts the hook in a process group of its own (on Linux it also
// dies with rally, see pdeathsig) and makes cancellation kill the whole
// group, not just its first process.
func group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pdeathsig(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if err := killGroup(cmd.Process.Pid); err != nil {
			return os.ErrProcessDone
		}
		return nil
	}
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
