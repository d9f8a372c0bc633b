package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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

// lineScan reads the lines of a session file, or of a part of one (its
// zero next0 is the start of the file), and knows where each starts.
type lineScan struct {
	br    *bufio.Reader
	buf   []byte
	pos   Pos // of the line next returned last
	next0 Pos // of the line next returns next
	// torn is set when a line had no "\n": only a crash, or a writer
	// that ends without one, leaves a last line so, and the next append
	// must start a line of its own.
	torn bool
}

// next returns the next line without its "\n"; ok is false at the end.
func (s *lineScan) next() (line []byte, complete, ok bool, err error) {
	if s.next0.Line == 0 {
		s.next0.Line = 1
	}
	line, complete, err = readJournalLine(s.br, &s.buf)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, false, err
	}
	if len(line) == 0 && !complete {
		return nil, false, false, nil
	}
	s.pos = s.next0
	s.next0.Offset += int64(len(line))
	if complete {
		s.next0.Offset++
	}
	s.next0.Line++
	s.torn = s.torn || !complete
	return line, complete, true, nil
}

// nextFilled returns the next line that is not blank, as next does: a
// blank line is neither the header nor an entry, and no warning.
func (s *lineScan) nextFilled() (line []byte, complete, ok bool, err error) {
	for {
		line, complete, ok, err = s.next()
		if !ok || len(bytes.TrimSpace(line)) > 0 {
			return line, complete, ok, err
		}
	}
}

// headerLine reads the header from line, the first line of the file that
// is not blank, which s returned (ok false: there was none), for Load and
// Scan alike.
func (r *journalReader) headerLine(path string, s *lineScan, line []byte, ok bool) error {
	if !ok {
		return fmt.Errorf("journal: open %s: line 1: no session header (empty file)", path)
	}
	if err := r.header(s.pos.Line, line); err != nil {
		return fmt.Errorf("journal: open %s: line %d: %w", path, s.pos.Line, err)
	}
	return nil
}
