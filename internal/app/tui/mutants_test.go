package tui

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestCountdownTicksWhenTheNumberChanges: with a delay that is not whole
// seconds, each tick comes the moment the shown number changes (2.5 s:
// at 0.5 s, 1.5 s and 2.5 s), so the number is never stale. Bug caught
// (issue 30): ticks a whole second apart from the event, which show "3s"
// until 1 s although only 2 s are left from 0.5 s on. The bubble's clock
// is the tick's own timer's, so no tick is waited for in real time.
func TestCountdownTicksWhenTheNumberChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, f := testModel(t, Options{})
		startRun(t, m, f, "What does rally do?", "")
		start := time.Now()
		// handle, not ev: an event's command also reads the session's
		// State (a batch); the countdown's tick is handle's own.
		cmd := m.handle(retryStartMsg{attempt: 1, max: 3, at: start, until: start.Add(2500 * time.Millisecond), err: err503, class: "transient"})
		if !strings.Contains(screen(m), "Retrying (1/3) in 3s…") {
			t.Fatalf("no loader at 3s:\n%s", screen(m))
		}
		var at []time.Duration
		for _, want := range []string{"in 2s…", "in 1s…"} {
			if cmd == nil {
				t.Fatalf("the countdown stopped after ticks at %v", at)
			}
			_, cmd = m.Update(cmd())
			at = append(at, time.Since(start))
			if !strings.Contains(screen(m), "Retrying (1/3) "+want) {
				t.Fatalf("after ticks at %v: want %q in\n%s", at, want, screen(m))
			}
		}
		if cmd != nil {
			m.Update(cmd())
			at = append(at, time.Since(start))
		}
		want := []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond}
		if !slices.Equal(at, want) {
			t.Errorf("ticks at %v, want %v: each when the shown seconds change", at, want)
		}
	})
}
