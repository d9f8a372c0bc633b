//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// group is a no-op without Unix process groups: cancellation kills the
// shell only (exec's default), and its children may outlive it.
func group(cmd *exec.Cmd) {}

// killGroup has no group to kill.
func killGroup(pid int) error { return nil }

// groupAlive reports no group: without groups there is nothing to track.
func groupAlive(pid int) bool { return false }

// signalOf describes how a process ended.
func signalOf(st *os.ProcessState) string { return st.String() }
