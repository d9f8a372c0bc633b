//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is an exited process's peak resident set in KiB.
func peakRSS(st *os.ProcessState) float64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / 1024 // bytes there
	}
	return float64(ru.Maxrss)
}
