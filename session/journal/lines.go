package journal

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// countLines counts the lines of rd if it is a file (an io.ReaderAt),
// without moving its offset: an upper bound on its entries, so that the
// read can size what it fills. It returns 0 when it cannot tell.
func countLines(rd io.Reader) int {
	ra, ok := rd.(io.ReaderAt)
	if !ok {
		return 0
	}
	buf := make([]byte, 64<<10)
	n := 1 // a last line without "\n"
	for off := int64(0); ; {
		k, err := ra.ReadAt(buf, off)
		n += bytes.Count(buf[:k], []byte{'\n'})
		off += int64(k)
		if err != nil {
			if err != io.EOF {
				return 0
			}
			return n
		}
	}
}

// readJournalLine reads one line of any length, without its "\n": a view
// of br's buffer when the line fits there (nearly every one: copying each
// line out was a tenth of a load's time), else assembled in *long. Either
// is valid until the next call. complete is false for a last line with no
// "\n" (and an empty one at EOF).
func readJournalLine(br *bufio.Reader, long *[]byte) (line []byte, complete bool, err error) {
	chunk, err := br.ReadSlice('\n')
	switch {
	case err == nil:
		return chunk[:len(chunk)-1], true, nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return chunk, false, err
	}
	buf := append((*long)[:0], chunk...)
	defer func() { *long = buf }()
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			return buf[:len(buf)-1], true, nil
		default:
			return buf, false, err
		}
	}
}
