//go:build !unix

package bench

import "time"

// selfCPU is not measured where there is no getrusage.
func selfCPU() (time.Duration, bool) { return 0, false }
