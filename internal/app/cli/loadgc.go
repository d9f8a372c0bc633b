package cli

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// loadHeadroom is how much a session load may allocate, in multiples of
// its file's size, before the collector runs: a load keeps nearly all it
// allocates (the messages it decodes are the session), about 1.5 times
// the file, so the collector run during it marks what is all still live,
// about a fifth of the load's CPU, and frees next to nothing.
const loadHeadroom = 2

// gcPause counts the loads under way. The collector's settings are the
// process's: loads can overlap (ACP serves each request on its own
// goroutine, RPC switches sessions while another runs), so the first load
// saves them and the last one puts them back; each load only lowers the
// limit by its own headroom in between.
var gcPause struct {
	sync.Mutex
	loads          int
	percent        int
	limit, maxSeen int64
}

// pauseGC holds the collector off while a session file of size bytes is
// loaded, up to a memory limit loadHeadroom times its size above what the
// process holds now (or the limit already set, if lower), so a file that
// makes garbage after all is still collected before the heap passes it.
// The returned func puts the collector's settings back once the last
// overlapping load is done; it is called once the load is done.
func pauseGC(size int64) (restore func()) {
	if size <= 0 {
		return func() {}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	want := int64(s[0].Value.Uint64()) + loadHeadroom*size
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.loads == 0 {
		gcPause.limit = debug.SetMemoryLimit(-1)
		gcPause.percent = debug.SetGCPercent(-1)
		gcPause.maxSeen = 0
	}
	gcPause.loads++
	// Overlapping loads each need their headroom: the limit is the largest
	// any of them asked for, never above the one set before the first.
	gcPause.maxSeen = max(gcPause.maxSeen, want)
	debug.SetMemoryLimit(min(gcPause.maxSeen, gcPause.limit))
	return func() {
		gcPause.Lock()
		defer gcPause.Unlock()
		if gcPause.loads--; gcPause.loads == 0 {
			debug.SetMemoryLimit(gcPause.limit)
			debug.SetGCPercent(gcPause.percent)
		}
	}
}
