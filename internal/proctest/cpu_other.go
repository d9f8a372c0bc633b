//go:build !unix

package proctest

import "time"

func CPUTime() time.Duration { return 0 }
