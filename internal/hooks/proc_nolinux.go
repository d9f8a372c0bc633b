//go:build unix && !linux

package hooks

import "syscall"

// pdeathsig is Linux only; elsewhere a hook outlives a crashed rally until
// its command ends.
func pdeathsig(*syscall.SysProcAttr) {}
