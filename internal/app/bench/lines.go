package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// lines reads an agent's stdout for the bench. What it costs per byte is
// paid on the same two cores as the agent it measures, so it copies as
// little as it can: output is read into a 1 MiB window and a line that
// ends inside it is used in place. A line that runs past the window is
// copied out only when it is wanted whole (responses) or is short; of a
// long line read for its type alone (the default event mode's
// message_update, which grows with the answer to megabytes) only its
// first and last bytes are kept, where the two agents put "type".
type lines struct {
	r    io.Reader
	buf  []byte
	i, j int   // the unread bytes are buf[i:j]
	n    int64 // bytes read so far
	err  error // from r, once it failed
	max  int

	long      []byte // the line so far, when it runs past the window
	head      []byte // its first edgeLen bytes, of a line not kept whole
	tail      []byte // its last edgeLen bytes so far
	total     int    // its length so far
	wholeLine bool   // keeping it whole
}

const (
	windowSize = 1 << 20
	// edgeLen is how much of each end of a long line is kept: enough for
	// `{"type":"…"` at the start or `"type":"…"}` at the end.
	edgeLen = 64
	// shortLine is kept whole even when only its type is wanted, for
	// lineType's decoding of a line with "type" in the middle.
	shortLine = 64 << 10
)

var errLineTooLong = errors.New("line too long")

func newLines(r io.Reader, maxLine int) *lines {
	return newLinesSize(r, maxLine, windowSize)
}

var WindowForBench = 1048576

func newLinesSize(r io.Reader, maxLine, size int) *lines {
	return &lines{r: r, buf: make([]byte, size), max: maxLine}
}

// next returns the next line whole, valid until the following call.
func (l *lines) next() ([]byte, error) { return l.scan(true) }

// nextType returns the top-level type of the next line.
func (l *lines) nextType() (string, error) {
	line, err := l.scan(false)
	if err != nil {
		return "", err
	}
	return lineType(line), nil
}

// scan reads up to the next newline. Whole, or for a line of at most
// shortLine bytes, it returns the line; otherwise its head and tail
// joined, which lineType reads as it would the line.
func (l *lines) scan(whole bool) ([]byte, error) {
	l.long, l.head, l.tail, l.total, l.wholeLine = l.long[:0], l.head[:0], l.tail[:0], 0, true
	spanned := false
	from := l.i // buf[l.i:from] has no newline
	for {
		if k := bytes.IndexByte(l.buf[from:l.j], '\n'); k >= 0 {
			seg := l.buf[l.i : from+k]
			l.i = from + k + 1
			if !spanned {
				return trimCR(seg), nil
			}
			return l.finish(seg)
		}
		if l.err != nil {
			if seg := l.buf[l.i:l.j]; len(seg) > 0 || spanned {
				l.i = l.j
				return l.finish(seg)
			}
			return nil, l.err
		}
		if seg := l.buf[l.i:l.j]; len(seg) > len(l.buf)/2 || spanned {
			// The line fills much of the window: set it aside.
			if err := l.keep(seg, whole); err != nil {
				return nil, err
			}
			spanned = true
			l.i, l.j = 0, 0
		} else if l.i > 0 {
			// A short start of a line: move it to the front.
			l.j = copy(l.buf, seg)
			l.i = 0
		}
		from = l.j
		n, err := l.r.Read(l.buf[l.j:])
		l.j += n
		l.n += int64(n)
		if err != nil {
			l.err = err
		}
	}
}

// keep adds seg to the line being set aside: all of it while the line is
// wanted whole or still short, else only its ends.
func (l *lines) keep(seg []byte, whole bool) error {
	l.total += len(seg)
	if l.total > l.max {
		return fmt.Errorf("read output: %w (over %d bytes)", errLineTooLong, l.max)
	}
	if l.wholeLine && !whole && l.total > shortLine {
		l.wholeLine = false
		l.head = append(l.head, l.long[:min(edgeLen, len(l.long))]...)
		l.tail = append(l.tail, l.long[max(0, len(l.long)-edgeLen):]...)
		l.long = l.long[:0]
	}
	if l.wholeLine {
		l.long = append(l.long, seg...)
		return nil
	}
	if len(l.head) < edgeLen {
		l.head = append(l.head, seg[:min(edgeLen-len(l.head), len(seg))]...)
	}
	l.tail = append(l.tail, seg[max(0, len(seg)-edgeLen):]...)
	l.tail = l.tail[max(0, len(l.tail)-edgeLen):]
	return nil
}

// finish ends a line that was set aside with its last piece, seg.
func (l *lines) finish(seg []byte) ([]byte, error) {
	if err := l.keep(seg, l.wholeLine); err != nil {
		return nil, err
	}
	if l.wholeLine {
		return trimCR(l.long), nil
	}
	return trimCR(append(l.head, l.tail...)), nil
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// drain reads to the end of the output, counting it.
func (l *lines) drain() {
	l.i = l.j
	for l.err == nil {
		n, err := l.r.Read(l.buf)
		l.n += int64(n)
		l.err = err
	}
}
