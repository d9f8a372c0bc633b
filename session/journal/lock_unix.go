//go:build unix

package journal

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on f without waiting: ErrLocked when
// another open file holds one. The lock belongs to the open file, so Close
// releases it and the kernel drops it when the process dies: a crashed
// rally never leaves a session locked. A file system without flock (some
// network mounts) is written unlocked, as before locks existed.
func tryLock(f *os.File) error {
	for {
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return ErrLocked
		case syscall.ENOLCK, syscall.ENOTSUP:
			return nil
		default:
			return err
		}
	}
}
