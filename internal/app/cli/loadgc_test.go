package cli

import (
	"io"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
)

// TestPauseGC: a load runs with the collector off under a limit the file's
// size above the process's memory (or the lower one set before), and both
// settings come back after it; an empty file changes nothing (bugs made to
// see it fail: restore leaving the limit set, the limit ignoring a lower
// one, no pause at all). It changes process-wide settings, so it does not
// run in parallel.
func TestPauseGC(t *testing.T) {
	const size = 64 << 20
	// held is what the process holds now, as pauseGC reads it; the limit
	// may be above it by the headroom and what the runtime maps meanwhile.
	held := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	tests := []struct {
		name     string
		size     int64
		oldLimit int64
		paused   bool
		// most is the most the limit may be during the load; 0: what the
		// process holds plus the headroom.
		most int64
	}{
		{"no limit set", size, math.MaxInt64, true, 0},
		{"a lower limit set", size, 100 << 20, true, 100 << 20},
		{"an empty file", 0, math.MaxInt64, false, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prevLimit := debug.SetMemoryLimit(tt.oldLimit)
			prevPercent := debug.SetGCPercent(100)
			defer func() {
				debug.SetMemoryLimit(prevLimit)
				debug.SetGCPercent(prevPercent)
			}()
			restore := pauseGC(tt.size)
			most := tt.most
			if most == 0 {
				most = held() + loadHeadroom*size + 64<<20
			}
			limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
			debug.SetGCPercent(percent)
			if tt.paused != (percent == -1) {
				t.Errorf("GC percent during the load %d, paused %v", percent, tt.paused)
			}
			if limit > most || tt.paused && limit < min(tt.oldLimit, loadHeadroom*size) {
				t.Errorf("memory limit during the load %d, want %d more than the process holds, at most %d", limit, loadHeadroom*size, most)
			}
			restore()
			if got := debug.SetMemoryLimit(-1); got != tt.oldLimit {
				t.Errorf("memory limit after the load %d, want %d", got, tt.oldLimit)
			}
			if got := debug.SetGCPercent(100); got != 100 {
				t.Errorf("GC percent after the load %d, want 100", got)
			}
		})
	}
}

// TestPauseGCOverlapping: two loads at once (ACP serves each request on
// its own goroutine) leave the collector off until the last one ends, and
// then put back the settings from before the first, whichever ends first
// (bug made to see it fail: each load saving and restoring on its own,
// which left the collector off for good when the first ended first).
func TestPauseGCOverlapping(t *testing.T) {
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	prevPercent := debug.SetGCPercent(100)
	defer func() {
		debug.SetMemoryLimit(prevLimit)
		debug.SetGCPercent(prevPercent)
	}()
	a := pauseGC(64 << 20)
	b := pauseGC(32 << 20)
	a()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent %d with one load still under way, want -1 (off)", p)
	}
	b()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit after both loads %d, want none", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent after both loads %d, want 100", got)
	}
}

// TestResumeKeepsNoEntries: a resumed session gets the file's context and
// not its entries, which nothing after start-up reads (bug made to see it
// fail: the entries left in Config.Resume).
func TestResumeKeepsNoEntries(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	j, err := journal.Create(dir, "/p")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if _, err := j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: 1}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	e := &runEnv{st: &settings.Settings{}}
	var cfg session.Config
	if err := e.openJournal(&runFlags{file: j.Path()}, home, "/p", &cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	defer e.close()
	switch r := cfg.Resume; {
	case r == nil || len(r.Messages) != 2 || len(r.IDs) != 2 || r.Messages[1].TextOf() != "two":
		t.Fatalf("resumed %+v, want the two messages and their ids", r)
	case r.Entries != nil:
		t.Errorf("the resume keeps %d entries", len(r.Entries))
	}
}
