package rpc

import (
	"bufio"
	"errors"
	"io"
)

// MaxLine is the longest command line the server reads (images arrive
// base64-encoded inside prompts, so it is generous). A longer line is
// answered with a parse error and skipped up to its line break.
const MaxLine = 64 << 20

// errLineTooLong marks a line longer than the reader's limit; the reader
// has skipped it and resumes at the next line.
var errLineTooLong = errors.New("line too long")

// lineReader splits a stream at LF only: CR LF loses its CR, and U+2028 and
// U+2029 (or any other byte) never end a line. There is no fixed line
// length below max.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line break, valid until the next
// call. A last line without a line break is returned before io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: the CR LF
				tooLong = true
				l.buf = l.buf[:0]
			} else if err == nil && len(l.buf) == 0 {
				// The common case: the whole line is in the reader's
				// buffer; no copy.
				return trimEOL(chunk), nil
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, errLineTooLong
			}
			if len(l.buf) > 0 {
				return trimEOL(l.buf), nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
