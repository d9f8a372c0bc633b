//go:build unix

package fleet_test

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
)

// TestRedisHung: a Redis that accepts but never answers costs one request
// the 200 ms timeout, and the ones after it nothing, until it answers again.
func TestRedisHung(t *testing.T) {
	rs := redistest.Start(t)
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	warned := 0
	f := open(t, rs.URL, func(string) { warned++ })
	g := gate(f, fake, key1)
	g.Breaker = fleet.Breaker{Failures: 3}
	if err := ask(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	rs.Pause()
	start := time.Now()
	if err := ask(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second || !f.Local() {
		t.Errorf("first request with a hung redis took %s (local %v), want about the 200ms timeout", d, f.Local())
	}
	start = time.Now()
	for range 5 {
		if err := ask(t.Context(), g); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d >= time.Second {
		t.Errorf("5 more requests took %s, as if each waited the 200ms timeout again", d)
	}
	rs.Resume()
	proctest.Wait(t, "shared again", func() bool { return !f.Local() })
	if warned != 1 {
		t.Errorf("%d warnings, want 1", warned)
	}
}
