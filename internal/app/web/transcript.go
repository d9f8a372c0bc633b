package web

import (
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A session file can be hundreds of megabytes (long tool outputs, years
// of prompts); its page must not be. The transcript is shown a page at a
// time: at most transcriptEntries entries and about transcriptBytes of
// their text, one block at most blockBytes (the rest of it is cut, and
// says how much). The timeline above still draws the whole session.
const (
	transcriptEntries = 500
	transcriptBytes   = 1 << 20
	blockBytes        = 256 << 10
)

// pager says which part of the transcript a page shows.
type pager struct {
	Page, Pages     int
	From, To, Total int    // entries shown, 1-based, of Total
	Prev, Next      string // links to the neighbouring pages
}

// shownBytes is what entry e puts on the page, its blocks cut to
// blockBytes.
func shownBytes(e *entryView) int {
	n := len(e.Text) + len(e.Error)
	for _, b := range e.Blocks {
		n += min(len(b.Text), blockBytes+64)
	}
	return n
}

// pageOf keeps in v only the entries of page (1-based; past the last is
// the last), cuts their long blocks, and returns where they are. Pages
// start where the previous one ended, so every entry is on one.
func (v *sessionView) pageOf(page int) *pager {
	var starts []int
	size, count := 0, 0
	for i := range v.Entries {
		n := shownBytes(&v.Entries[i])
		if i == 0 || count == transcriptEntries || count > 0 && size+n > transcriptBytes {
			starts = append(starts, i)
			size, count = 0, 0
		}
		size += n
		count++
	}
	p := &pager{Total: len(v.Entries), Pages: max(len(starts), 1)}
	p.Page = min(max(page, 1), p.Pages)
	if len(starts) == 0 {
		return p
	}
	from, to := starts[p.Page-1], len(v.Entries)
	if p.Page < len(starts) {
		to = starts[p.Page]
	}
	v.Entries = v.Entries[from:to:to]
	for i := range v.Entries {
		cutBlocks(&v.Entries[i])
	}
	p.From, p.To = from+1, to
	link := func(n int) string { return "/sessions/" + v.Name + "?page=" + strconv.Itoa(n) + "#transcript" }
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	return p
}

// cutBlocks cuts each block of e longer than blockBytes, at a character
// boundary, saying how much is left out.
func cutBlocks(e *entryView) {
	for i := range e.Blocks {
		b := &e.Blocks[i]
		if len(b.Text) <= blockBytes {
			continue
		}
		cut := blockBytes
		for cut > 0 && !utf8.RuneStart(b.Text[cut]) {
			cut--
		}
		b.Text = b.Text[:cut] + fmt.Sprintf("\n… %d more bytes of this block are not shown (the session file holds them)", len(b.Text)-cut)
	}
}

// maxLoads is how many session files are read into memory at once, by
// all views and the sessions list together (its warm-up at start
// included): reading one costs a few times its size, so the console's
// memory is bounded by the largest files, not by how many are read in
// parallel.
const maxLoads = 2

// limiter admits at most cap(l) holders at a time.
type limiter chan struct{}

func newLimiter(n int) limiter { return make(limiter, n) }

// acquire waits for a place, or for ctx to end.
func (l limiter) acquire(ctx context.Context) (release func(), err error) {
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
