package bench

import (
	"sync"
	"testing"
)

// TestSettledHeapIgnoresPools: what a pool holds after its last use must
// not show as a difference between two settled reads, which "heap kept
// after load" is. With one collection a read it counts 1 MiB of pooled
// buffers that the next read no longer sees.
func TestSettledHeapIgnoresPools(t *testing.T) {
	var pool sync.Pool
	for range 256 {
		pool.Put(make([]byte, 4<<10))
	}
	h0 := settledHeap()
	h1 := settledHeap()
	if d := int64(h1) - int64(h0); d < -256<<10 || d > 256<<10 {
		t.Errorf("two settled reads differ by %d bytes with 1 MiB pooled before them", d)
	}
}
