//go:build unix

package filelock

import (
	"os"
	"syscall"
)

// flock takes an exclusive flock(2) lock. It is tied to the open file, so
// the kernel releases it when the process dies: a crashed rally never
// leaves the marks locked.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func funlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
