package journal

// The load's memory promises (arena.go), as counts that do not depend on
// the machine: allocations and bytes, not time. Written for the mutants
// that lived in scripts/mutate.sh's first run (issue 30), as
// mutants_test.go is.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/rally-agent/rally/llm"
)

// bytesPerRun is testing.AllocsPerRun for bytes: what one call of f
// allocates, on average over runs after a warm-up call.
func bytesPerRun(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / uint64(runs)
}

// retainedBy is the heap that what f returns holds after a collection.
func retainedBy(f func() any) int64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	runtime.KeepAlive(v)
	return int64(b.HeapAlloc) - int64(a.HeapAlloc)
}

// TestLoadMemory: what arena.go promises of a long session's load, as
// counts that do not depend on the machine (allocations and bytes, not
// time). Bugs it catches: the strings, content blocks or names no longer
// shared (an allocation each), the message slab not sized to the file
// (one each), the messages of a plain file copied out of the slab instead
// of used as they are (a second copy of every message struct), and, for
// a file whose context leaves one message out, the whole slab kept alive
// by that one entry.
func TestLoadMemory(t *testing.T) {
	const n = 3000
	p := longSession(t, n)
	// Fewer than one allocation a message: a usage each third message
	// (1000), a shared block every 64 KiB, and a few per file.
	if a := testing.AllocsPerRun(3, func() { Load(p) }); a > n/2 {
		t.Errorf("a load of %d messages makes %.0f allocations, want at most %d", n, a, n/2)
	}
	ld, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	own := ownSize(ld.Messages)
	// The file's messages, decoded once, are about 1.4 times their own
	// size allocated; a second copy of the structs would be about 1.7.
	if b := bytesPerRun(3, func() { Load(p) }); float64(b) > 1.55*float64(own) {
		t.Errorf("a load allocates %d bytes, %.2f times the messages' own size; want at most 1.55", b, float64(b)/float64(own))
	}
	plain := retainedBy(func() any { ld, _ := Load(p); return ld })
	whole, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(whole), "\n")
	failed := `{"type":"message","id":"f0f0f0f0","parentId":null,"timestamp":"2026-03-04T10:00:00.000Z","retried":true,"message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"529","timestamp":1}}`
	last := ld.Entries[n-1].ID
	var waits strings.Builder
	for i := range n { // a chain, so the context is still the messages as they are
		fmt.Fprintf(&waits, `{"type":"custom","id":"w%d","parentId":%q,"timestamp":"2026-03-04T10:00:00.000Z","customType":%q,"data":{}}`+"\n", i, last, WaitType)
		last = fmt.Sprint("w", i)
	}
	cases := []struct {
		name  string
		file  string
		added int // lines added to the plain file
	}{
		// The context leaves the failed answer out, so it is built anew
		// and the slab must be let go, whichever of its messages the
		// failed one is (bugs: the slab kept alive by that one entry,
		// at its first or its last message).
		{"a failed answer last", string(whole) + strings.Replace(failed, "null", `"`+ld.Entries[n-1].ID+`"`, 1) + "\n", 1},
		{"a failed answer first, off the chain", header + "\n" + failed + "\n" + rest, 1},
		// The slab has a slot a line: sized to the messages once loaded
		// (bug: a slot kept for every other line).
		{"as many other lines as messages", string(whole) + waits.String(), n},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(q, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			got := retainedBy(func() any { ld, _ := Load(q); return ld })
			// An entry a line added, and half a slab (a message struct a
			// line, about a quarter of the messages' own size) for noise.
			limit := plain + int64(tc.added)*int64(unsafe.Sizeof(Entry{})) + n*int64(unsafe.Sizeof(llm.Message{}))/2
			if got > limit {
				t.Errorf("the load holds %d bytes, the plain file's %d; want at most %d", got, plain, limit)
			}
		})
	}
}

// TestLoadLongStrings: a string longer than a quarter of an arena block
// gets an array of its own, sized to it, so a file of long messages
// allocates little more than its own size. Bug: strings up to four
// blocks long given a fresh block that they then outgrow (a block and a
// grown copy for each).
func TestLoadLongStrings(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := j.AppendMessage(jUser(strings.Repeat("y", 100<<10+i), 1), false); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	st, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	// About 1.15 times the file: its text once, the line buffer, the
	// entries; the bug's is about 1.8.
	if b := bytesPerRun(3, func() { Load(j.Path()) }); float64(b) > 1.4*float64(st.Size()) {
		t.Errorf("a load allocates %d bytes, %.2f times the file's %d; want at most 1.4", b, float64(b)/float64(st.Size()), st.Size())
	}
}
