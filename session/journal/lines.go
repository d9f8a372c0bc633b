package journal

import (
	"bufio"
	"errors"
)

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
