package bench

import (
	"sync"
	"testing"
	"weak"
)

// TestSettledHeapIgnoresPools: what a pool holds after its last use is
// gone by the time settledHeap reads the heap, so it cannot count in one
// read of "heap kept after load" and not in the other. Weak pointers say
// whether the pooled buffers were collected, which no difference of two
// heap readings can say for sure. With one collection they are still in
// the pool's victim cache and the test fails.
func TestSettledHeapIgnoresPools(t *testing.T) {
	var pool sync.Pool
	var seen []weak.Pointer[[4 << 10]byte]
	for range 16 {
		b := new([4 << 10]byte)
		seen = append(seen, weak.Make(b))
		pool.Put(b)
	}
	settledHeap()
	for i, w := range seen {
		if w.Value() != nil {
			t.Fatalf("pooled buffer %d of %d is still live after settledHeap", i+1, len(seen))
		}
	}
}
