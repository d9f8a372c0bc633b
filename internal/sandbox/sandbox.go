// Package sandbox confines the processes rally's tools start (README,
// "Tools and secrets"): on Linux a Landlock ruleset that hides rally's
// credentials and marks from the command and everything it starts, allows
// writes only where the policy says, and optionally no TCP at all. It is
// what makes the credentials unreachable however a command spells their
// path ($(printf …), base64, a symlink, /proc/self/…, a child process): the
// kernel checks the file, not the words.
//
// The ruleset applies to the child alone: Start restricts one locked OS
// thread, forks the command from it and waits for it there, and the thread
// ends with its goroutine, so rally itself is never confined.
package sandbox

import (
	"errors"
	"os/exec"
)

// ErrUnavailable is wrapped by Check's error where Landlock cannot be used
// (another OS, a kernel without it, a container that blocks it).
var ErrUnavailable = errors.New("landlock is not available")

// Policy is what a confined command may do.
type Policy struct {
	// Hide lists files the command may not open at all (auth.json,
	// auth-marks.json). Everything else is readable.
	Hide []string
	// Write lists the directories (and files) the command may write,
	// create and delete in: the project, the temporary directory, and any
	// the user adds. Hidden files inside them stay hidden.
	Write []string
	// NoNetwork refuses every TCP connect and bind.
	NoNetwork bool
}

// Start starts cmd confined by p and returns the function that waits for
// it (call it exactly once, as cmd.Wait). It fails, without starting cmd,
// where Landlock is unavailable (see Check).
func (p *Policy) Start(cmd *exec.Cmd) (wait func() error, err error) { return p.start(cmd) }
