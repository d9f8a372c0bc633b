package cli

import (
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
)

// gcSettings reads the collector's settings without changing them.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// withGCSettings runs the test under the given settings, and puts the
// process's back after it, whatever a pacing left. An earlier test's
// resume may still be pacing: it is waited out first, so that its end
// cannot put back settings over the test's.
func withGCSettings(t *testing.T, percent int, limit int64) {
	waitPaced(t)
	prevLimit, prevPercent := debug.SetMemoryLimit(limit), debug.SetGCPercent(percent)
	t.Cleanup(func() {
		waitPaced(t)
		debug.SetMemoryLimit(prevLimit)
		debug.SetGCPercent(prevPercent)
	})
}

// waitPaced runs collections until the last load's pacing is over (its
// cleanup puts the settings back after one), failing after a minute.
func waitPaced(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		gcPause.Lock()
		pacing := gcPause.pacing
		gcPause.Unlock()
		if !pacing {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the settings did not come back after the load's collections")
		}
		runtime.GC()
		runtime.Gosched() // the cleanup runs on a goroutine of its own
	}
}

// TestPauseGC: a load runs with the collector off under a limit the file's
// size above the process's memory (or the lower one set before); after
// it, the collector stays off under the limit GOGC would pace the loaded
// heap by, and both settings come back after the collection that brings;
// an empty file changes nothing; with GOGC off before, the limit comes
// back at once (bugs made to see it fail: restore leaving the limit set,
// the limit ignoring a lower one, no pause at all, the settings put back
// as soon as the load ends). It changes process-wide settings, so it does
// not run in parallel.
func TestPauseGC(t *testing.T) {
	const size = 64 << 20
	tests := []struct {
		name     string
		size     int64
		percent  int
		oldLimit int64
		paused   bool
		// most is the most the limit may be during the load; 0: what the
		// process holds plus the headroom.
		most int64
		// paces: the collector stays off after the load until a collection.
		paces bool
	}{
		{"no limit set", size, 100, math.MaxInt64, true, 0, true},
		{"a lower limit set", size, 100, 100 << 20, true, 100 << 20, true},
		{"GOGC 50", size, 50, math.MaxInt64, true, 0, true},
		{"GOGC off", size, -1, 1 << 40, true, 0, false},
		{"an empty file", 0, 100, math.MaxInt64, false, math.MaxInt64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withGCSettings(t, tt.percent, tt.oldLimit)
			restore := pauseGC(tt.size)
			most := tt.most
			if most == 0 {
				most = heldMemory() + loadHeadroom*size + 64<<20
			}
			percent, limit := gcSettings()
			if tt.percent >= 0 && tt.paused != (percent < 0) {
				t.Errorf("GC percent during the load %d, paused %v", percent, tt.paused)
			}
			if limit > most || tt.paused && limit < min(tt.oldLimit, loadHeadroom*size) {
				t.Errorf("memory limit during the load %d, want %d more than the process holds, at most %d", limit, loadHeadroom*size, most)
			}
			restore()
			if tt.paces {
				held := heldMemory()
				percent, limit := gcSettings()
				if percent >= 0 {
					t.Errorf("GC percent after the load %d, want off until a collection", percent)
				}
				want := min(held+held*int64(tt.percent)/100, tt.oldLimit)
				if limit < want/2 || limit > want+64<<20 {
					t.Errorf("memory limit after the load %d, want about %d (what the process holds, plus GOGC %d%%)", limit, want, tt.percent)
				}
				waitPaced(t)
			}
			percent, limit = gcSettings()
			if limit != tt.oldLimit || percent != int64(tt.percent) {
				t.Errorf("settings after the load and a collection: GOGC %d, limit %d; want %d, %d", percent, limit, tt.percent, tt.oldLimit)
			}
		})
	}
}

// TestPauseGCOverlapping: two loads at once (ACP serves each request on
// its own goroutine) leave the collector off until the last one ends, and
// then put back the settings from before the first, whichever ends first;
// a load that starts while the one before is pacing keeps the settings
// saved before both (bugs made to see it fail: each load saving and
// restoring on its own, which left the collector off for good when the
// first ended first; a new load saving the pacing's settings as the
// process's).
func TestPauseGCOverlapping(t *testing.T) {
	withGCSettings(t, 100, math.MaxInt64)
	a := pauseGC(64 << 20)
	b := pauseGC(32 << 20)
	a()
	if p, _ := gcSettings(); p >= 0 {
		t.Errorf("GC percent %d with one load still under way, want off", p)
	}
	b()
	c := pauseGC(16 << 20) // while a and b's end is pacing
	c()
	waitPaced(t)
	if p, limit := gcSettings(); p != 100 || limit != math.MaxInt64 {
		t.Errorf("settings after the loads: GOGC %d, limit %d; want 100 and none", p, limit)
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
