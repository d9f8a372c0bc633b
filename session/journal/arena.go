package journal

import (
	"unsafe"

	"github.com/rally-agent/rally/internal/jsonscan"
	"github.com/rally-agent/rally/llm"
)

// A long session file is tens of thousands of messages, each of a dozen
// strings and a block or two. Allocated one by one they cost the load most
// of its time (allocation and the GC after it) and about a third more
// memory than their bytes (size classes, headers). So a read copies what
// it keeps into a few large blocks instead: the bytes of every string, the
// content blocks, and the messages, which are decoded straight into the
// slice that becomes Loaded.Messages (see journalReader.direct).

// arenaChunk is the size of the blocks strings are copied into; a longer
// string gets a block of its own.
const arenaChunk = 64 << 10

// arena hands out strings and byte slices copied into shared blocks. A
// block's bytes are never written again once handed out, so the strings
// are as immutable as any other; a block lives while any of them does.
type arena struct {
	buf []byte // the current block: free space is buf[len:cap]
}

// room returns the current block with at least n bytes free.
func (a *arena) room(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		if n > arenaChunk/4 {
			return make([]byte, 0, n) // alone: the block is not replaced
		}
		a.buf = make([]byte, 0, arenaChunk)
	}
	return a.buf
}

// bytes returns a copy of b in the arena, its capacity its length (an
// append to it never writes into the block).
func (a *arena) bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	blk := a.room(len(b))
	start := len(blk)
	blk = append(blk, b...)
	a.keep(blk)
	return blk[start:len(blk):len(blk)]
}

// string returns a copy of v in the arena.
func (a *arena) string(v string) string {
	if v == "" {
		return ""
	}
	b := a.bytes(unsafe.Slice(unsafe.StringData(v), len(v)))
	return unsafe.String(&b[0], len(b))
}

// str returns raw, a JSON string's bytes between its quotes, decoded as
// encoding/json does, as a string in the arena; plain says they need no
// decoding (jsonscan.Scanner.Quoted).
func (a *arena) str(raw []byte, plain bool) string {
	if len(raw) == 0 {
		return ""
	}
	if plain {
		b := a.bytes(raw)
		return unsafe.String(&b[0], len(b))
	}
	// Decoding nearly never lengthens a string (jsonscan.AppendUnquoted);
	// when it does past the room, append moves it to an array of its own,
	// and the block stays as it was.
	blk := a.room(len(raw))
	start := len(blk)
	blk = jsonscan.AppendUnquoted(blk, raw)
	a.keep(blk)
	if len(blk) == start {
		return ""
	}
	return unsafe.String(&blk[start], len(blk)-start)
}

// keep records what was appended to blk if blk is the current block
// (not a string's own array).
func (a *arena) keep(blk []byte) {
	if unsafe.SliceData(blk) == unsafe.SliceData(a.buf) {
		a.buf = blk
	}
}

// blockChunk is how many content blocks one slab holds.
const blockChunk = 512

// blocks hands out content slices carved from shared slabs, each with its
// capacity its length, so an append to a message's content copies it
// rather than writing into its neighbour's.
type blocks struct{ slab []llm.Content }

// copy returns a copy of cs from a slab; nil for none.
func (b *blocks) copy(cs []llm.Content) []llm.Content {
	if len(cs) == 0 {
		return nil
	}
	if cap(b.slab)-len(b.slab) < len(cs) {
		if len(cs) > blockChunk/8 {
			return append([]llm.Content(nil), cs...)
		}
		b.slab = make([]llm.Content, 0, blockChunk)
	}
	start := len(b.slab)
	b.slab = append(b.slab, cs...)
	return b.slab[start:len(b.slab):len(b.slab)]
}

// usageChunk is how many usages one slab holds: an assistant message has
// one, so a long file's are a few hundred slabs, not one allocation each.
const usageChunk = 256

// usages hands out a message's usage from shared slabs.
type usages struct{ slab []llm.Usage }

// next returns a zero usage of the current slab.
func (u *usages) next() *llm.Usage {
	if len(u.slab) == cap(u.slab) {
		u.slab = make([]llm.Usage, 0, usageChunk)
	}
	u.slab = u.slab[:len(u.slab)+1]
	p := &u.slab[len(u.slab)-1]
	*p = llm.Usage{} // already zero: see firstWrite
	return p
}

// firstWrite: a slab's memory is fresh from the kernel, and the first
// touch of each of its pages is a page fault. Decoding into a slot reads
// it first (a nil check, a field read before it is set), which maps the
// shared zero page, and the write after it faults a second time, copying
// the page and flushing it from the other cores' TLBs (an interrupt to
// each). Writing the slot as it is handed out makes that one fault: at 50k
// messages 1,800 of a resume's 12,100 faults, and their interrupts, about
// 45 of its 95 ms of system time (TestSlotsWrittenFirst).

// direct makes the slab of decoded messages Loaded.Messages when the
// context is exactly those messages in file order (a session without
// compactions, branches, retried answers or pi's own roles: nearly every
// file), so no message is copied and none is left behind as garbage. It
// reports false, changing nothing, for any other file.
func (r *journalReader) direct(path []int) bool {
	ld, msgs := r.ld, r.scan.msgs
	if len(path) != len(ld.Entries) || len(msgs) == 0 {
		return false
	}
	j := 0
	for p, i := range path {
		e := &ld.Entries[i]
		switch {
		case i != p:
			return false
		case e.Type == "message":
			if e.Retried || j == len(msgs) || e.Message != &msgs[j] {
				return false
			}
			j++
		case e.Type == "compaction" || e.Type == "custom_message" || e.Type == "branch_summary":
			return false
		case e.Type == "model_change":
			f := r.field(i)
			ld.LastProvider, ld.LastModel = f.Provider, f.ModelID
		}
	}
	if j != len(msgs) {
		return false
	}
	// One spare slot, as the general path leaves (the summary's).
	if cap(msgs)-len(msgs) > len(msgs)/8+16 {
		// The file has many lines besides messages: do not keep a
		// slot for each.
		exact := make([]llm.Message, len(msgs), len(msgs)+1)
		copy(exact, msgs)
		msgs = exact
	}
	ld.Messages = msgs
	ld.IDs = make([]string, 0, cap(msgs))
	j = 0
	for i := range ld.Entries {
		if e := &ld.Entries[i]; e.Type == "message" {
			e.Message = &msgs[j]
			ld.IDs = append(ld.IDs, e.ID)
			j++
		}
	}
	r.scan.msgs = nil
	return true
}

// freeSlab gives every entry still pointing into the slab (one the
// context left out, or sent in another form) a message of its own, so the
// slab is not kept alive for them.
func (r *journalReader) freeSlab() {
	msgs := r.scan.msgs
	if len(msgs) == 0 {
		return
	}
	for i := range r.ld.Entries {
		e := &r.ld.Entries[i]
		if _, ok := slabIndex(msgs, e.Message); ok {
			own := *e.Message
			e.Message = &own
		}
	}
	r.scan.msgs = nil
}

// slabIndex returns where p is in slab, if it points into it.
func slabIndex[T any](slab []T, p *T) (int, bool) {
	if p == nil || len(slab) == 0 {
		return 0, false
	}
	lo, at := uintptr(unsafe.Pointer(&slab[0])), uintptr(unsafe.Pointer(p))
	size := unsafe.Sizeof(slab[0])
	if at < lo || at >= lo+uintptr(len(slab))*size {
		return 0, false
	}
	return int((at - lo) / size), true
}
