//go:build unix

package regfile

import (
	"os"
	"syscall"
)

// openNonblock opens path for reading with O_NONBLOCK: open(2) of a FIFO
// with no writer would otherwise wait forever. Regular files ignore the
// flag.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
