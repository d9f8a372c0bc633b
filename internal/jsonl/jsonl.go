// Package jsonl reads JSON-lines input (the RPC protocol's commands, rally
// classify's errors) one line at a time, with a length limit that a long
// line cannot break: it is skipped and reading resumes at the next line.
package jsonl

import (
	"bufio"
	"errors"
	"io"
)

// ErrTooLong marks a line longer than the reader's limit; the reader has
// skipped it and resumes at the next line.
var ErrTooLong = errors.New("line too long")

// Reader splits a stream at LF only: CR LF loses its CR, and U+2028 and
// U+2029 (or any other byte) never end a line. There is no fixed line
// length below max.
type Reader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewReader reads lines of at most max bytes (line break excluded) from r.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its line break, valid until the next
// call. A last line without a line break is returned before io.EOF.
func (l *Reader) Next() ([]byte, error) {
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
				return nil, ErrTooLong
			}
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, ErrTooLong
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
