//go:build !unix

package bench

import "os"

// peakRSS is unknown off Unix.
func peakRSS(*os.ProcessState) float64 { return 0 }
