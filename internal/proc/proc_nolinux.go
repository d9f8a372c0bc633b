//go:build unix && !linux

package proc

import "syscall"

// deathSignal does nothing: only Linux has a parent-death signal. A
// command outlives a rally killed with SIGKILL here, until it ends; every
// other exit of rally still kills its group with KillGroup.
func deathSignal(*syscall.SysProcAttr) {}
