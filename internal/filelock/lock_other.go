//go:build !unix

package filelock

import "os"

// flock is a no-op where flock(2) does not exist: writes stay atomic
// (temp file and rename) but two processes marking at the same instant may
// lose one mark, which the next usage-limit error puts back.
func flock(*os.File) error { return nil }

func funlock(*os.File) {}

// TryLock is a no-op where flock(2) does not exist.
func TryLock(*os.File) error { return nil }
