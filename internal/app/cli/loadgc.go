package cli

import (
	"runtime"
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
// saves them and the last one's first collection puts them back; each load
// only lowers the limit by its own headroom in between.
var gcPause struct {
	sync.Mutex
	loads          int
	percent        int
	limit, maxSeen int64
	// pacing: the last load is over and the collection that puts the
	// settings back has not run yet; gen tells a pacing's own cleanup
	// from that of one a later load ended.
	pacing bool
	gen    int
}

// pauseGC holds the collector off while a session file of size bytes is
// loaded, up to a memory limit loadHeadroom times its size above what the
// process holds now (or the limit already set, if lower), so a file that
// makes garbage after all is still collected before the heap passes it.
// The returned func ends the pause once the load is done (restoreGC).
func pauseGC(size int64) (restore func()) {
	if size <= 0 {
		return func() {}
	}
	want := heldMemory() + loadHeadroom*size
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.loads == 0 {
		if gcPause.pacing {
			// The settings of before are still saved: the pacing is over,
			// and the collector stays off.
			gcPause.pacing = false
			gcPause.gen++
			debug.SetGCPercent(-1)
		} else {
			gcPause.limit = debug.SetMemoryLimit(-1)
			gcPause.percent = debug.SetGCPercent(-1)
		}
		gcPause.maxSeen = 0
	}
	gcPause.loads++
	// Overlapping loads each need their headroom: the limit is the largest
	// any of them asked for, never above the one set before the first.
	gcPause.maxSeen = max(gcPause.maxSeen, want)
	debug.SetMemoryLimit(min(gcPause.maxSeen, gcPause.limit))
	return restoreGC
}

// restoreGC ends a load's pause. After the last one the process holds the
// loaded session, all of it live, and the collector has never run: put
// back at once, GOGC would start a cycle right away (its goal is still the
// start's 4 MB), marking that whole heap while the first request is
// answered, 2–8 ms of a 50k-message resume's first get_state. So the
// collector stays off under the limit GOGC would set once it knew that
// heap (what the process holds, plus GOGC percent of it), and the
// settings come back after the first collection that limit brings.
func restoreGC() {
	held := heldMemory()
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.loads--; gcPause.loads > 0 {
		return
	}
	if gcPause.percent < 0 {
		// GOGC was off: there is no goal to pace, only the limit.
		putBackGC()
		return
	}
	gcPause.pacing = true
	gcPause.gen++
	debug.SetMemoryLimit(min(held+held*int64(gcPause.percent)/100, gcPause.limit))
	// The cleanup of an object nothing refers to runs after the next
	// collection. It has a pointer, so it is not one of the tiny
	// allocator's, which share a block with others.
	runtime.AddCleanup(&struct{ _ *byte }{}, paced, gcPause.gen)
}

// paced puts the settings back after the first collection since pacing
// gen began, unless a later load ended that pacing.
func paced(gen int) {
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.pacing && gcPause.gen == gen && gcPause.loads == 0 {
		putBackGC()
	}
}

// putBackGC restores the settings saved by the first load; gcPause is
// locked.
func putBackGC() {
	debug.SetMemoryLimit(gcPause.limit)
	debug.SetGCPercent(gcPause.percent)
	gcPause.pacing = false
}

// heldMemory is all the memory the Go runtime holds, as the limit counts it.
func heldMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
