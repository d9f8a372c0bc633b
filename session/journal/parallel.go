package journal

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"slices"
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
// order: the warnings, the entries' indexes. Each reader keeps the ids it
// read apart, sorted (idBatch), and the join merges them into the id set:
// a set, and whether any id came twice, do not depend on the order they
// came in. A
// part's first entry cannot share its parent id with the entry above
// (another part read it): it keeps a copy, equal as a string. A version 1
// file chains entries by position as it reads them, so it is read in one
// pass.

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
// cuts after the first piece, in order. The cuts are found first, from
// the size alone, so that each piece's lines are counted on a core of its
// own: counting them in one pass was a tenth of a 50k-message load, all
// of it before any part could start.
func lineCuts(ra io.ReaderAt, parts int, least int64) (lines int, cuts []cut) {
	size, ok := sizeOf(ra)
	if !ok {
		parts = 1 // no size to cut by: one count to the end
	}
	parts = min(parts, int(size/max(least, 1)))
	buf := make([]byte, lineBlock)
	var offs []int64
	for p := 1; p < parts; p++ {
		target := size * int64(p) / int64(parts)
		k, err := ra.ReadAt(buf, target)
		if err != nil && err != io.EOF {
			return 0, nil
		}
		i := bytes.IndexByte(buf[:k], '\n')
		if i < 0 {
			continue // a line past this block (or the file shrank): the next cut may find its end
		}
		off := target + int64(i) + 1
		if off >= size || len(offs) > 0 && off <= offs[len(offs)-1] {
			continue
		}
		offs = append(offs, off)
	}
	// Piece k is [offs[k-1], offs[k]); the last one reads to the end,
	// whatever the size said.
	counts := make([]int, len(offs)+1)
	errs := make([]error, len(offs)+1)
	count := func(k int, buf []byte) {
		from, to := int64(0), int64(-1)
		if k > 0 {
			from = offs[k-1]
		}
		if k < len(offs) {
			to = offs[k]
		}
		counts[k], errs[k] = countLines(ra, from, to, buf)
	}
	var wg sync.WaitGroup
	for k := 1; k <= len(offs); k++ {
		wg.Go(func() { count(k, make([]byte, lineBlock)) })
	}
	count(0, buf)
	wg.Wait()
	n := 0
	for k := range counts {
		if errs[k] != nil {
			return 0, nil
		}
		n += counts[k]
		if k < len(offs) {
			cuts = append(cuts, cut{off: offs[k], line: n + 1})
		}
	}
	return n + 1, cuts // + 1: a last line without "\n"
}

// lineBlock is how much of a file lineCuts reads at a time.
const lineBlock = 64 << 10

// sizeOf returns the size of ra when it can tell it (a file, a
// bytes.Reader, a section).
func sizeOf(ra io.ReaderAt) (int64, bool) {
	switch v := ra.(type) {
	case interface{ Size() int64 }:
		return v.Size(), true
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := v.Stat(); err == nil {
			return st.Size(), true
		}
	}
	return 0, false
}

// countLines counts the newlines of ra from byte from up to byte to (to
// the end when to < 0), reading into buf.
func countLines(ra io.ReaderAt, from, to int64, buf []byte) (int, error) {
	n := 0
	for to < 0 || from < to {
		b := buf
		if to >= 0 {
			b = b[:min(int64(len(b)), to-from)]
		}
		k, err := ra.ReadAt(b, from)
		n += bytes.Count(b[:k], []byte{'\n'})
		from += int64(k)
		if err == io.EOF {
			return n, nil // the file shrank, or the end
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// part is one piece of a file after the first, read by its own reader.
type part struct {
	r    journalReader
	torn bool
	err  error
}

// readWithParts reads the entries of s, the first part, while readers of
// their own read the parts after each cut of ra, then joins them to it.
func (r *journalReader) readWithParts(s *lineScan, ra io.ReaderAt, path string, cuts []cut, res *readResult, entries []Entry, msgs []llm.Message) error {
	parts, wait := readParts(ra, path, cuts, entries, msgs)
	err := r.readEntries(s, path)
	r.ids.done()
	wait() // the parts' readers write into the slabs: none outlives the read
	if err != nil {
		return err
	}
	return r.join(parts, res, entries, msgs)
}

// readParts starts a reader for each cut of ra, into the regions of the
// slabs entries and msgs (each of a slot per line) from its first line to
// the next cut's; the last part reads to the end of the file.
func readParts(ra io.ReaderAt, path string, cuts []cut, entries []Entry, msgs []llm.Message) (parts []part, wait func()) {
	parts = make([]part, len(cuts))
	var wg sync.WaitGroup
	for k, c := range cuts {
		end, size := cap(entries), int64(noLimit) // the last part: to the end
		if k+1 < len(cuts) {
			end, size = cuts[k+1].line-2, cuts[k+1].off-c.off
		}
		p := &parts[k]
		// The entry of line n is at most the (n-1)th: the header's line
		// above has none. So a file of an entry on every line fills the
		// regions end to end and the join moves nothing.
		lo := c.line - 2
		p.r.ld = &Loaded{Entries: entries[lo:lo:end]}
		p.r.scan.msgs = msgs[lo:lo:end]
		p.r.ids = newIDBatch(end - lo)
		wg.Go(func() {
			s := &lineScan{br: bufio.NewReaderSize(io.NewSectionReader(ra, c.off, size), 64<<10), next0: Pos{Offset: c.off, Line: c.line}}
			p.err = p.r.readEntries(s, path)
			p.r.ids.done()
			p.torn = s.torn
		})
	}
	return parts, wg.Wait
}

// join appends the parts, read into the regions after r's, to what r
// read: entries and messages move down over the regions' unused slots,
// each moved entry's message pointer follows its message, and the id
// set takes each reader's ids. entries and msgs are the whole slabs.
func (r *journalReader) join(parts []part, res *readResult, entries []Entry, msgs []llm.Message) error {
	for k := range parts {
		if err := parts[k].err; err != nil {
			return err
		}
	}
	// r's slabs were capped at its region while the parts were read into
	// the regions after it; given back their whole capacity, appending
	// fills those. The messages never outgrow a region
	// (scanner.newMessage), but the entries do when a part holds more
	// lines than lineCuts counted (a file rewritten between the count and
	// the read), and append moved them to an array of their own: copied
	// down into the slab, they would overwrite a region not yet joined, so
	// the entries are then joined in an array of their own.
	r.scan.msgs = msgs[:len(r.scan.msgs)]
	if r.inSlab(parts, entries) {
		r.ld.Entries = entries[:len(r.ld.Entries)]
	} else {
		r.ld.Entries = slices.Clip(r.ld.Entries) // the first append moves them
	}
	for k := range parts {
		p := &parts[k]
		from, first := len(r.ld.Entries), len(r.scan.msgs)
		r.ld.Entries = appendInPlace(r.ld.Entries, p.r.ld.Entries)
		own := p.r.scan.msgs
		r.scan.msgs = appendInPlace(r.scan.msgs, own)
		if len(own) > 0 && &own[0] != &r.scan.msgs[first] {
			// Moved: the entries' pointers follow their messages.
			moved := r.scan.msgs[first:]
			for i := from; i < len(r.ld.Entries); i++ {
				if j, ok := slabIndex(own, r.ld.Entries[i].Message); ok {
					r.ld.Entries[i].Message = &moved[j]
				}
			}
		}
		if len(p.r.fields) > 0 && r.fields == nil {
			r.fields = make(map[int]*entryFields, len(p.r.fields))
		}
		for i, f := range p.r.fields {
			r.fields[from+i] = f
		}
		r.ld.Warnings = append(r.ld.Warnings, p.r.ld.Warnings...)
		r.skipped = r.skipped || p.r.skipped
		res.torn = res.torn || p.torn
	}
	batches := []*idBatch{r.ids}
	for k := range parts {
		batches = append(batches, parts[k].r.ids)
	}
	r.dupIDs = res.ids.merge(batches...)
	return nil
}

// inSlab reports whether the entries r and the parts read are all where
// they were read, in the slab.
func (r *journalReader) inSlab(parts []part, slab []Entry) bool {
	all := slab[:cap(slab)]
	in := func(es []Entry) bool {
		_, ok := slabIndex(all, unsafe.SliceData(es))
		return len(es) == 0 || ok
	}
	for k := range parts {
		if !in(parts[k].r.ld.Entries) {
			return false
		}
	}
	return in(r.ld.Entries)
}

// appendInPlace appends b to a. When b already lies right after a in
// memory (every line of the parts above had its slab item: a clean file)
// only a's length changes: moving megabytes of a slab with pointers onto
// themselves is not free (a memmove, and write barriers while the
// collector runs). Else b is copied down, as append does.
func appendInPlace[T any](a, b []T) []T {
	if len(b) > 0 && cap(a) >= len(a)+len(b) && &a[:len(a)+1][len(a)] == &b[0] {
		return a[:len(a)+len(b)]
	}
	return append(a, b...)
}
