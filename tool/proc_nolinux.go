//go:build unix && !linux

package tool

import "syscall"

// deathSignal does nothing: only Linux has a parent-death signal. A
// command outlives a rally killed with SIGKILL here; Procs.Kill covers
// every other exit.
func deathSignal(*syscall.SysProcAttr) {}
