package cli

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// loadHeadroom is how much a session load may allocate, in multiples of
// its file's size, before the collector runs: a load keeps nearly all it
// allocates (the messages it decodes are the session), about 1.5 times
// the file, so the collector run during it marks what is all still live,
// about a fifth of the load's CPU, and frees next to nothing.
const loadHeadroom = 2

// pauseGC holds the collector off while the session file at path is
// loaded, up to a memory limit loadHeadroom times its size above what the
// process holds now (or the limit already set, if lower), so a file that
// makes garbage after all is still collected before the heap passes it.
// The returned func puts back the collector's settings; it is called once
// the load is done. Start-up is the only goroutine allocating then, so
// the process-wide setting is the load's alone.
func pauseGC(path string) (restore func()) {
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return func() {}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	limit := int64(s[0].Value.Uint64()) + loadHeadroom*st.Size()
	oldLimit := debug.SetMemoryLimit(-1)
	percent := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(min(limit, oldLimit))
	return func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(percent)
	}
}
