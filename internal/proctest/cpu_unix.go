//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used, user and system: on a
// machine shared with other work it says what a benchmark costs better
// than the wall clock does.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
