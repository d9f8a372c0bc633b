//go:build !unix

package hooks

import "os/exec"

// group is a no-op without Unix process groups: cancellation kills the
// hook's process only (exec's default), and its children may outlive it.
func group(*exec.Cmd) {}

// killGroup has no group to kill.
func killGroup(int) error { return nil }
