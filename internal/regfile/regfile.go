// Package regfile reads the small files rally takes from places it does not
// control (a cloned repository's .rally/settings.json and AGENTS.md,
// auth.json): only a regular file, only up to a limit. A FIFO, a device
// such as /dev/zero, or a file far larger than any real one is refused
// with an error instead of hanging start-up or exhausting memory.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular matches, with errors.Is, the error for a path that is a
// FIFO, a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge matches the error for a file larger than the limit.
var ErrTooLarge = errors.New("file too large")

// Read reads the regular file at path, following symlinks, if it holds at
// most limit bytes. A missing file gives an error that matches
// fs.ErrNotExist.
//
// The file is opened non-blocking, so opening a FIFO with no writer returns
// at once, and the type is checked on the opened file, not the path, so a
// swap between the check and the read cannot slip a FIFO in. The read is
// bounded too, for a file that grows while it is read.
func Read(path string, limit int64) ([]byte, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, tooLarge(path, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, int64(len(b)), limit)
	}
	return b, nil
}

func tooLarge(path string, size, limit int64) error {
	return fmt.Errorf("%s: %w: %d bytes or more, the limit is %d", path, ErrTooLarge, size, limit)
}

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a file"
}
