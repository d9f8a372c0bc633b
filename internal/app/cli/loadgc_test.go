package cli

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
)

// TestPauseGC: a load runs with the collector off under a limit the file's
// size above the process's memory (or the lower one set before), and both
// settings come back after it; a file that is not there changes nothing
// (bugs made to see it fail: restore leaving the limit set, the limit
// ignoring a lower one, no pause at all). It changes process-wide
// settings, so it does not run in parallel.
func TestPauseGC(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	const size = 64 << 20
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, size); err != nil { // sparse: the size is what counts
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		oldLimit int64
		paused   bool
		// most is the most the limit may be during the load.
		most int64
	}{
		{"no limit set", file, math.MaxInt64, true, 1 << 30},
		{"a lower limit set", file, 100 << 20, true, 100 << 20},
		{"no file", filepath.Join(dir, "none"), math.MaxInt64, false, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prevLimit := debug.SetMemoryLimit(tt.oldLimit)
			prevPercent := debug.SetGCPercent(100)
			defer func() {
				debug.SetMemoryLimit(prevLimit)
				debug.SetGCPercent(prevPercent)
			}()
			restore := pauseGC(tt.path)
			limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
			debug.SetGCPercent(percent)
			if tt.paused != (percent == -1) {
				t.Errorf("GC percent during the load %d, paused %v", percent, tt.paused)
			}
			if limit > tt.most || tt.paused && limit < min(tt.oldLimit, loadHeadroom*size) {
				t.Errorf("memory limit during the load %d, want %d more than the process holds, at most %d", limit, loadHeadroom*size, tt.most)
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
