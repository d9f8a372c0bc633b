//go:build unix

package fleet_test

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/internal/proctest"
)

// TestConfigDefaultsAndTimeout: a zero Timeout and Reconnect mean the
// defaults (a call works; a hung Redis goes local and is found again),
// and a Timeout that is set is the one waited. Bugs caught (surviving
// mutants): zero taken as is (every call timed out at once, or the
// reconnect ticker given no interval), and a set Timeout replaced by the
// default. The timing checks are lower bounds: a timer never fires early.
func TestConfigDefaultsAndTimeout(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	t.Run("defaults", func(t *testing.T) {
		f, err := fleet.Open(fleet.Config{URL: rs.URL})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w := &fleet.Windows{Fleet: f}
		// A call slower than the 200 ms default is possible on a loaded
		// machine; it goes local and reconnects, so a call must answer
		// soon, never none.
		proctest.Wait(t, "a call with the default timeout to answer", func() bool { return w.Learn(ctx, "p", "", "m", 1000) == nil })
		rs.Pause()
		start := time.Now()
		w.Learn(ctx, "p", "", "m", 1000)
		if d := time.Since(start); d < fleet.DefaultTimeout || !f.Local() {
			t.Errorf("hung redis: went local %v after %s, want after the %s default", f.Local(), d, fleet.DefaultTimeout)
		}
		rs.Resume()
		proctest.Wait(t, "shared again", func() bool { return !f.Local() })
	})
	t.Run("set timeout", func(t *testing.T) {
		const timeout = time.Second
		f, err := fleet.Open(fleet.Config{URL: rs.URL, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rs.Pause()
		defer rs.Resume()
		start := time.Now()
		(&fleet.Windows{Fleet: f}).Learn(ctx, "p", "", "m", 1000)
		if d := time.Since(start); d < timeout {
			t.Errorf("hung redis: gave up after %s, want the configured %s", d, timeout)
		}
	})
}
