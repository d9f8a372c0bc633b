package tool

import "syscall"

// deathSignal makes the kernel SIGKILL the shell when the thread that
// started it dies, which covers rally being killed with SIGKILL, when no
// cleanup of its own runs. The signal follows the thread, not the
// process, but Go only ends a thread whose goroutine locked it and exited
// locked, which Bash.Run never does, so the signal means rally is gone.
// Processes the shell put in the background do not inherit it (the
// kernel clears it on fork); Procs.Kill covers those on every other exit.
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
