//go:build unix

package hooks

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// TestExitKillsLeftChildren: a hook that exits 0 leaving a background
// child has that child killed with its group, whether or not the child
// holds the hook's output open. Bug caught (issue 30): the group not
// killed after a clean exit, leaking a `sleep 60` per event.
func TestExitKillsLeftChildren(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"output closed", `sleep 60 >/dev/null 2>&1 & echo $! > "$1/child"; exit 0`},
		{"output held", `sleep 60 & echo $! > "$1/child"; exit 0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sh := script(t, dir, "h", tt.body)
			r := New(Config{Hooks: []settings.Hook{hook(30*time.Second, []string{sh, dir}, string(session.AgentSettled))}})
			defer r.Close(context.Background())
			res := r.Test(context.Background(), Source{}, Event{Type: session.AgentSettled})
			if len(res) != 1 || res[0].Err != nil || res[0].ExitCode != 0 {
				t.Fatalf("results %+v, want one clean exit", res)
			}
			assertGone(t, filepath.Join(dir, "child"))
		})
	}
}
