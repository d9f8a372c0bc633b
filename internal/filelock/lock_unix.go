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

// TryLock takes an exclusive flock(2) on the open file f without waiting:
// ErrHeld when another open file holds one. Close releases it, and the
// kernel drops it when the process dies. A file system without flock (some
// network mounts) gives nil: the caller goes on unlocked, as it would
// where flock does not exist at all.
func TryLock(f *os.File) error {
	for {
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return ErrHeld
		case syscall.ENOLCK, syscall.ENOTSUP:
			return nil
		default:
			return err
		}
	}
}
