//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// Group is a no-op without Unix process groups: cancellation kills the
// command's process only (exec's default), and its children may outlive
// it.
func Group(*exec.Cmd) {}

// KillGroup has no group to kill.
func KillGroup(int) error { return nil }

// GroupAlive reports no group: without groups there is nothing to track.
func GroupAlive(int) bool { return false }

// Describe says how a process ended.
func Describe(st *os.ProcessState) string { return st.String() }
