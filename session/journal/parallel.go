package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/rally-agent/rally/llm"
)

// A long session is read on every core: decoding its lines is nearly all
// of a resume's time, and no line needs another to be decoded. The file is
// cut at line starts into parts of about equal size; the reader that finds
// the header reads the first part, one goroutine each of the others, each
// into its own region of the slabs readJournal sized by the line count
// (one entry and at most one slab message per line), and the parts are
// then joined in file order. What depends on order is done in the join, in
// order: the ids' set (and so duplicate ids), the warnings, the entries'
// indexes. A part's first entry cannot share its parent id with the entry
// above (another part read it): it keeps a copy, equal as a string. A
// version 1 file chains entries by position as it reads them, so it is
// read in one pass.

// minPart is the least a part is worth a goroutine for: below it the
// join and the goroutine cost about what the part saves.
const minPart = 1 << 20

// cut is where a part of a file starts: at byte off, the first byte of
// line number line (1-based).
type cut struct {
	off  int64
	line int
}

// lineCuts counts the lines of ra, without moving its offset: an upper
// bound on its entries, so that the read can size what it fills (0 when
// it cannot tell). It also finds where to cut it into up to parts pieces
// of about equal size, none under least bytes, each starting a line: the
// cuts after the first piece, in order.
func lineCuts(ra io.ReaderAt, parts int, least int64) (lines int, cuts []cut) {
	const block = 64 << 10
	buf := make([]byte, block)
	var before []int // newlines before each block
	n := 0
	size := int64(0)
	for {
		k, err := ra.ReadAt(buf, size)
		before = append(before, n)
		n += bytes.Count(buf[:k], []byte{'\n'})
		size += int64(k)
		if err != nil {
			if err != io.EOF {
				return 0, nil
			}
			break
		}
	}
	lines = n + 1 // a last line without "\n"
	parts = min(parts, int(size/max(least, 1)))
	for p := 1; p < parts; p++ {
		target := size * int64(p) / int64(parts)
		start := target / block * block
		k, err := ra.ReadAt(buf, start)
		if err != nil && err != io.EOF {
			return lines, cuts
		}
		at := int(target - start)
		if at >= k {
			break // the file shrank
		}
		i := bytes.IndexByte(buf[at:k], '\n')
		if i < 0 {
			continue // a line past this block: the next cut may find its end
		}
		off := target + int64(i) + 1
		if off >= size || len(cuts) > 0 && off <= cuts[len(cuts)-1].off {
			continue
		}
		line := before[start/block] + bytes.Count(buf[:at+i+1], []byte{'\n'}) + 1
		cuts = append(cuts, cut{off: off, line: line})
	}
	return lines, cuts
}

// part is one piece of a file after the first, read by its own reader.
type part struct {
	r    journalReader
	torn bool
	err  error
}

// readParts starts a reader for each cut of ra, into the regions of
// entries and msgs (each sized lines) from its first line to the next
// cut's; the last part reads to the end of the file. The reader of the
// first part must read no further than cuts[0] (see readJournal).
func readParts(ra io.ReaderAt, path string, cuts []cut, lines int, entries []Entry, msgs []llm.Message) (parts []part, wait func()) {
	parts = make([]part, len(cuts))
	var wg sync.WaitGroup
	for k, c := range cuts {
		end, size := lines, int64(1<<62) // the last part: to the end
		if k+1 < len(cuts) {
			end, size = cuts[k+1].line-1, cuts[k+1].off-c.off
		}
		p := &parts[k]
		lo := c.line - 1
		p.r.ld = &Loaded{Entries: entries[lo:lo:end]}
		p.r.scan.msgs = msgs[lo:lo:end]
		wg.Go(func() {
			p.torn, p.err = p.r.readLines(io.NewSectionReader(ra, c.off, size), path, c.line-1)
		})
	}
	return parts, wg.Wait
}

// readLines reads the entry lines of rd, the first of them line n+1,
// without an id set (join adds the ids, in order). It reports whether the
// last line had no "\n".
func (r *journalReader) readLines(rd io.Reader, path string, n int) (torn bool, err error) {
	br := bufio.NewReaderSize(rd, 64<<10)
	var long []byte
	for {
		line, complete, err := readJournalLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			return torn, fmt.Errorf("journal: read %s: %w", path, err)
		}
		if len(line) == 0 && !complete {
			return torn, nil
		}
		n++
		if !complete {
			torn = true
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r.entry(n, line, complete, nil)
	}
}

// join appends the parts, read into the regions after r's, to what r
// read: entries and messages move down over the regions' unused slots,
// each moved entry's message pointer follows its message, and the ids
// are added in file order. entries and msgs are the whole slabs.
func (r *journalReader) join(parts []part, res *readResult, entries []Entry, msgs []llm.Message) error {
	for k := range parts {
		if err := parts[k].err; err != nil {
			return err
		}
	}
	// r's slabs were capped at its region while the parts were read; one
	// never reallocated is given back its whole capacity, so appending
	// fills the regions after it.
	if unsafe.SliceData(r.ld.Entries) == unsafe.SliceData(entries) {
		r.ld.Entries = entries[:len(r.ld.Entries)]
	}
	r.scan.msgs = msgs[:len(r.scan.msgs)]
	const size = unsafe.Sizeof(llm.Message{})
	for k := range parts {
		p := &parts[k]
		from := len(r.ld.Entries)
		r.ld.Entries = append(r.ld.Entries, p.r.ld.Entries...)
		first := len(r.scan.msgs)
		own := p.r.scan.msgs
		r.scan.msgs = append(r.scan.msgs, own...)
		var lo uintptr
		if len(own) > 0 {
			lo = uintptr(unsafe.Pointer(&own[0]))
		}
		for i := from; i < len(r.ld.Entries); i++ {
			e := &r.ld.Entries[i]
			if m := uintptr(unsafe.Pointer(e.Message)); e.Message != nil && len(own) > 0 && m >= lo && m < lo+uintptr(len(own))*size {
				e.Message = &r.scan.msgs[first+int((m-lo)/size)]
			}
			if res.ids.add(e.ID) {
				r.dupIDs = true
			}
		}
		for i, f := range p.r.fields {
			if r.fields == nil {
				r.fields = map[int]*entryFields{}
			}
			r.fields[from+i] = f
		}
		r.ld.Warnings = append(r.ld.Warnings, p.r.ld.Warnings...)
		r.skipped = r.skipped || p.r.skipped
		res.torn = res.torn || p.torn
	}
	return nil
}
