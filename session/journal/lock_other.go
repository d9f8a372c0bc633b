//go:build !unix

package journal

import "os"

// tryLock is a no-op where flock(2) does not exist: two processes writing
// one session there can still fork its entry chain.
func tryLock(*os.File) error { return nil }
