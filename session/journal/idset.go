package journal

import "sync/atomic"

// idSet holds the entry ids of a file, so that a new one never collides
// (newEntryID). Nearly every id is pi's form, 8 lowercase hex characters:
// those are kept as 32-bit numbers in an open-addressed table, 4 bytes
// each where a map[string]struct{} took about 33 and a hash of the string
// on every line of a load; any other id (a version 1 file's "v1-N", a
// UUID) goes into a map.
type idSet struct {
	// table holds each hex id plus one (0 marks a free slot, so the id
	// 00000000 needs no special case); its length is a power of two, at
	// least twice the ids it holds.
	table []uint32
	n     int
	other map[string]struct{}
}

// newIDSet returns a set sized for about n ids.
func newIDSet(n int) *idSet {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return &idSet{table: make([]uint32, size)}
}

// add puts id in the set and reports whether it was there already.
func (s *idSet) add(id string) (dup bool) {
	v, ok := hexID(id)
	if !ok {
		if s.other == nil {
			s.other = map[string]struct{}{}
		}
		_, dup = s.other[id]
		s.other[id] = struct{}{}
		return dup
	}
	if 2*(s.n+1) > len(s.table) {
		s.grow()
	}
	i, found := s.slot(v)
	if found {
		return true
	}
	s.table[i] = v + 1
	s.n++
	return false
}

// sharedAdds adds ids to a set from several goroutines at once (the
// parts of a file read on every core, parallel.go): the table's slots are
// claimed by compare-and-swap, so two readers adding the same id find it
// once each way, and the rest is the reader's own until merge. Which id of
// a probe cluster lands in which slot depends on the order, not the set.
type sharedAdds struct {
	n     int                 // the ids it put in the table
	other map[string]struct{} // its ids not of pi's form
	over  []string            // its ids the full table had no slot for
	dup   bool                // an id it added was already in the set
}

// addShared puts id in s as add does, safe beside other goroutines'
// addShared on the same set while nothing else uses it. The table is not
// grown: newIDSet sized it for the lines counted, and an id it has no
// slot for (a file that grew while it was read) waits in a.over for merge,
// which grows it. Its count and other ids are in a, for merge.
func (s *idSet) addShared(a *sharedAdds, id string) {
	s.addSharedCAS(a, id, atomic.CompareAndSwapUint32)
}

// addSharedCAS is addShared claiming free slots with cas: a test's
// seam, to lose a compare-and-swap when it chooses.
func (s *idSet) addSharedCAS(a *sharedAdds, id string, cas func(addr *uint32, old, new uint32) bool) {
	v, ok := hexID(id)
	if !ok {
		if a.other == nil {
			a.other = map[string]struct{}{}
		}
		_, dup := a.other[id]
		a.other[id] = struct{}{}
		a.dup = a.dup || dup
		return
	}
	mask := len(s.table) - 1
	i := s.home(v)
	for range len(s.table) {
		w := atomic.LoadUint32(&s.table[i])
		if w == 0 {
			if cas(&s.table[i], 0, v+1) {
				a.n++
				return
			}
			// Another reader took the slot first, maybe for this very
			// id: look at what it put there. A slot taken stays taken,
			// so this is the slot's last change.
			w = atomic.LoadUint32(&s.table[i])
		}
		if w == v+1 {
			a.dup = true
			return
		}
		i = (i + 1) & mask
	}
	a.over = append(a.over, id) // every slot taken
}

// merge adds to s what the shared adds in as put aside, in order, once
// no goroutine adds any more; it reports whether any id was added twice.
func (s *idSet) merge(as ...*sharedAdds) (dup bool) {
	for _, a := range as { // the table's count first: add grows by it
		s.n += a.n
		dup = dup || a.dup
	}
	for _, a := range as {
		for id := range a.other {
			dup = s.add(id) || dup
		}
		for _, id := range a.over {
			dup = s.add(id) || dup
		}
	}
	return dup
}

// has reports whether id is in the set.
func (s *idSet) has(id string) bool {
	if v, ok := hexID(id); ok {
		_, found := s.slot(v)
		return found
	}
	_, ok := s.other[id]
	return ok
}

// slot returns where v is in the table, or the free slot where it would go.
func (s *idSet) slot(v uint32) (int, bool) {
	mask := len(s.table) - 1
	for i := s.home(v); ; i = (i + 1) & mask {
		switch s.table[i] {
		case 0:
			return i, false
		case v + 1:
			return i, true
		}
	}
}

// home is the slot where the probe for v starts.
func (s *idSet) home(v uint32) int {
	// Ids are random, but a file's may not be: mix before probing.
	return int(v*0x9e3779b1) & (len(s.table) - 1)
}

func (s *idSet) grow() {
	old := s.table
	s.table = make([]uint32, max(2*len(old), 16))
	for _, w := range old {
		if w != 0 {
			i, _ := s.slot(w - 1)
			s.table[i] = w
		}
	}
}

// hexID reads an id of pi's form (8 lowercase hex characters, as
// newEntryID writes them) as a number. Upper case is another id, so it is
// not of the form, and neither is ffffffff, which the table cannot hold
// (it stores each id plus one).
func hexID(id string) (uint32, bool) {
	if len(id) != 8 {
		return 0, false
	}
	var v uint32
	for i := range 8 {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, v != 1<<32-1
}
