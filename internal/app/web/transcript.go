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

// pages splits a transcript into pages as its entries come, one at a
// time, so that the split needs no entry kept: a page ends before the
// entry that would take it past transcriptEntries entries or
// transcriptBytes of text, and the next starts where it ended, so every
// entry is on one page.
type pages struct {
	starts      []int // the index of each page's first entry
	size, count int   // of the page being filled
	total       int
}

// add counts the next entry, which puts n bytes on the page, and reports
// whether it starts a page.
func (p *pages) add(n int) bool {
	first := p.total == 0 || p.count == transcriptEntries || p.count > 0 && p.size+n > transcriptBytes
	if first {
		p.starts = append(p.starts, p.total)
		p.size, p.count = 0, 0
	}
	p.size += n
	p.count++
	p.total++
	return first
}

// pager says where page (1-based; past the last is the last) of the
// session called name lies: its pager, its index in starts, and how many
// entries it has.
func (p *pages) pager(name string, page int) (pg *pager, index, count int) {
	pg = &pager{Total: p.total, Pages: max(len(p.starts), 1)}
	pg.Page = min(max(page, 1), pg.Pages)
	if len(p.starts) == 0 {
		return pg, -1, 0
	}
	from, to := p.starts[pg.Page-1], p.total
	if pg.Page < len(p.starts) {
		to = p.starts[pg.Page]
	}
	pg.From, pg.To = from+1, to
	link := func(n int) string { return "/sessions/" + name + "?page=" + strconv.Itoa(n) + "#transcript" }
	if pg.Page > 1 {
		pg.Prev = link(pg.Page - 1)
	}
	if pg.Page < pg.Pages {
		pg.Next = link(pg.Page + 1)
	}
	return pg, pg.Page - 1, to - from
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
