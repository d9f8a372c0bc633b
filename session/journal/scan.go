package journal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// A viewer of a session file that may be hundreds of megabytes (the web
// console) cannot hold it whole, as Load does: Scan reads it one entry at
// a time, each decoded exactly as Load decodes it, and says where each
// entry's line starts, so that a viewer keeps what one page needs and the
// places where its pages start, and reads a page again from its place.
// What Scan holds is one line, whatever the file's size.

// Pos is where an entry's line starts in a session file. The zero Pos is
// the start of the file.
type Pos struct {
	Offset int64 // byte offset of the line
	Line   int   // its line number, 1-based
}

// maxScanWarnings is how many warnings a Scan keeps; the rest are
// counted (Scanned.MoreWarnings), so a file of a million bad lines does
// not become a million strings.
const maxScanWarnings = 100

// Scanned is what a Scan read besides the entries.
type Scanned struct {
	ID, Cwd string
	// Name is the latest non-empty session_info name among the entries
	// read (of the whole file when the scan started at the top).
	Name string
	// Warnings are what was skipped, as Load words them (those about the
	// model's context aside, which only resuming builds), at most
	// maxScanWarnings of them; MoreWarnings counts the rest.
	Warnings     []string
	MoreWarnings int
}

// Scan reads the session file at path from from (the zero Pos, or one
// that an earlier Scan of the same file gave) to its end, calling fn with
// each entry in file order and the place of its line; fn returns false to
// stop. The entry is fn's to keep. The header is read first wherever the
// scan starts; a missing or bad header is an error, as for Load, and so is
// ctx ending.
func Scan(ctx context.Context, path string, from Pos, fn func(e *Entry, at Pos) bool) (*Scanned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: scan: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	r := &journalReader{ld: &Loaded{}}
	out := &Scanned{}
	s := lineScan{br: br}
	line, _, ok, err := s.nextFilled()
	if err != nil {
		return nil, fmt.Errorf("journal: scan %s: %w", path, err)
	}
	if err := r.headerLine(path, &s, line, ok); err != nil {
		return nil, err
	}
	out.ID, out.Cwd = r.ld.ID, r.ld.Cwd
	if from.Offset > s.next0.Offset {
		if _, err := f.Seek(from.Offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("journal: scan %s: %w", path, err)
		}
		br.Reset(f)
		s.next0 = from
	}
	for k := 0; ; k++ {
		if k%256 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("journal: scan %s: %w", path, ctx.Err())
		}
		line, complete, ok, err := s.nextFilled()
		if err != nil {
			return nil, fmt.Errorf("journal: scan %s: %w", path, err)
		}
		if !ok {
			break
		}
		// r.ld.Entries holds only the entry before, which a version 1
		// file's entries chain to (see entry).
		before := len(r.ld.Entries)
		r.entry(s.pos.Line, line, complete) // no r.ids: they are Open's bookkeeping
		r.keepWarnings(out)
		if len(r.ld.Entries) == before {
			continue // skipped, with a warning
		}
		e := r.ld.Entries[before]
		if e.Type == "session_info" {
			if name := strings.TrimSpace(r.field(before).Name); name != "" {
				out.Name = name
			}
		}
		clear(r.fields)
		r.ld.Entries = append(r.ld.Entries[:0], e)
		if !fn(&e, s.pos) {
			break
		}
	}
	out.Warnings = r.ld.Warnings
	return out, nil
}

// keepWarnings moves what r warned past maxScanWarnings into the count.
func (r *journalReader) keepWarnings(out *Scanned) {
	if n := len(r.ld.Warnings); n > maxScanWarnings {
		out.MoreWarnings += n - maxScanWarnings
		r.ld.Warnings = r.ld.Warnings[:maxScanWarnings]
	}
}
