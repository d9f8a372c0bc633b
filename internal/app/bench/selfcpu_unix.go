//go:build unix

package bench

import (
	"syscall"
	"time"
)

// selfCPU is the bench process's own user and system CPU time so far:
// what reading an agent's output costs (with the fake LLM's serving,
// which writes a recorded answer at once), to set beside the agent's.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
