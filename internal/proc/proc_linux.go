package proc

import "syscall"

// deathSignal makes the kernel SIGKILL the command's process when the
// thread that started it dies, which covers rally being killed with
// SIGKILL, when no cleanup of its own runs. The signal follows the
// thread, not the process, but Go only ends a thread whose goroutine
// locked it and exited locked, which no caller of Group does, so the
// signal means rally is gone. Processes the command started do not
// inherit it (the kernel clears it on fork): while rally lives,
// KillGroup reaches those.
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
