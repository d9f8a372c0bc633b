package journal

import "slices"

// idSet holds the entry ids of a file, so that a new one never collides
// (newEntryID). Nearly every id is pi's form, 8 lowercase hex characters:
// those are kept as 32-bit numbers, those a load read in a sorted list and
// those added since in an open-addressed table, 4 bytes each where a
// map[string]struct{} took about 33 and a hash of the string on every line
// of a load; any other id (a version 1 file's "v1-N", a UUID) goes into a
// map.
type idSet struct {
	// table holds each hex id plus one (0 marks a free slot, so the id
	// 00000000 needs no special case); its length is a power of two, at
	// least twice the ids it holds.
	table []uint32
	n     int
	other map[string]struct{}
	// loaded holds the hex ids a load read (merge), sorted, each once:
	// 4 bytes each, half the table's, and searched only when a new id is
	// made. The table holds those added after.
	loaded []uint32
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
	if ok {
		if _, found := slices.BinarySearch(s.loaded, v); found {
			return true
		}
	}
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

// idBatch holds the ids one reader of a load read, apart from the set
// until the read is over (idSet.merge), so that the readers of a file's
// parts, each on a core of its own, share nothing while they read:
// claiming slots of one table by compare-and-swap cost a load more than
// anything else of its bookkeeping (a random cache line, from a core that
// had just streamed megabytes past it), where appending to a reader's own
// list and sorting it once costs a tenth of that.
type idBatch struct {
	hex   []uint32 // the ids of pi's form, sorted by done
	other []string // any other id
}

// newIDBatch returns a batch with room for about n ids.
func newIDBatch(n int) *idBatch { return &idBatch{hex: make([]uint32, 0, max(n, 0))} }

func (b *idBatch) add(id string) {
	if v, ok := hexID(id); ok {
		b.hex = append(b.hex, v)
		return
	}
	b.other = append(b.other, id)
}

// done sorts the batch for merge, on its reader's goroutine, once it has
// read its last line.
func (b *idBatch) done() { slices.Sort(b.hex) }

// merge puts the ids of the batches, each done, into s, which holds none
// yet, and reports whether any id came twice. The hex ids become s.loaded,
// merged in one pass over the sorted batches.
func (s *idSet) merge(bs ...*idBatch) (dup bool) {
	n := 0
	for _, b := range bs {
		n += len(b.hex)
	}
	var all []uint32
	if len(bs) == 1 {
		all = bs[0].hex // a read in one pass: its batch is the list
	} else {
		all = make([]uint32, 0, n)
		for _, b := range bs {
			all = mergeSorted(all, b.hex)
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dup = true
			break
		}
	}
	if dup {
		all = slices.Compact(all)
	}
	s.loaded = all
	for _, b := range bs {
		for _, id := range b.other {
			dup = s.add(id) || dup
		}
	}
	return dup
}

// mergeSorted returns the sorted a and b merged, in a's array: its
// capacity holds them both.
func mergeSorted(a, b []uint32) []uint32 {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 || a[len(a)-1] <= b[0] { // all of b after a: the first batch, say
		return append(a, b...)
	}
	n := len(a)
	out := a[:n+len(b)]
	// From the end, so that no element of a is overwritten before it
	// is placed.
	i, j, k := n-1, len(b)-1, n+len(b)-1
	for j >= 0 {
		if i >= 0 && a[i] > b[j] {
			out[k] = a[i]
			i--
		} else {
			out[k] = b[j]
			j--
		}
		k--
	}
	return out
}

// has reports whether id is in the set.
func (s *idSet) has(id string) bool {
	if v, ok := hexID(id); ok {
		if _, found := slices.BinarySearch(s.loaded, v); found {
			return true
		}
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
