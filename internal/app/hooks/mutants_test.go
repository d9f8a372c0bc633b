//go:build unix

package hooks

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
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
			res := r.Test(context.Background(), Source{}, session.AgentSettledEvent{})
			if len(res) != 1 || res[0].Err != nil || res[0].ExitCode != 0 {
				t.Fatalf("results %+v, want one clean exit", res)
			}
			assertGone(t, filepath.Join(dir, "child"))
		})
	}
}

// TestSampleToolResults: `rally hooks test` sends a tool start without a
// result and an update and end with one, as the session does. Bug caught
// (a surviving mutant): the test negated, giving the start a result and
// the others none.
func TestSampleToolResults(t *testing.T) {
	for _, tt := range []struct {
		typ    session.EventType
		result bool
	}{
		{session.ToolExecutionStart, false},
		{session.ToolExecutionUpdate, true},
		{session.ToolExecutionEnd, true},
	} {
		t.Run(string(tt.typ), func(t *testing.T) {
			e, ok := Sample(string(tt.typ))
			var name string
			var result bool
			switch e := e.(type) {
			case session.ToolExecutionStartEvent:
				name = e.ToolName
			case session.ToolExecutionUpdateEvent:
				name, result = e.ToolName, e.PartialResult != nil
			case session.ToolExecutionEndEvent:
				name, result = e.ToolName, e.Result != nil
			}
			if !ok || name != "bash" || result != tt.result {
				t.Errorf("sample tool %q, result %v; want bash, result %v", name, result, tt.result)
			}
		})
	}
}

// TestTailKeepsExactlyTheCap: output of exactly the cap is kept whole and
// not marked as cut; one byte more is. Bug caught (a surviving mutant):
// trimming at the cap, not past it, which showed "…" before an output
// that had lost nothing.
func TestTailKeepsExactlyTheCap(t *testing.T) {
	for _, tt := range []struct {
		n   int
		cut bool
	}{{outputCap, false}, {outputCap + 1, true}} {
		var tl tail
		tl.Write(bytes.Repeat([]byte("x"), tt.n))
		s := tl.String()
		if strings.HasPrefix(s, "…") != tt.cut || strings.Count(s, "x") != outputCap {
			t.Errorf("%d bytes: kept %d, cut %v; want %d, cut %v", tt.n, strings.Count(s, "x"), strings.HasPrefix(s, "…"), outputCap, tt.cut)
		}
	}
}

// TestCloseReportsWhatItKilled: Close past its grace reports a killed
// hook even with nothing queued, and a Close that killed and dropped
// nothing reports nothing. Bugs caught (surviving mutants): either half
// of "nothing killed and nothing dropped" negated.
func TestCloseReportsWhatItKilled(t *testing.T) {
	t.Run("killed, none queued", func(t *testing.T) {
		dir := t.TempDir()
		sh := script(t, dir, "h", `echo $$ > "$1/pid"; exec sleep 60`)
		r := New(Config{Hooks: []settings.Hook{hook(time.Minute, []string{sh, dir}, string(session.AgentSettled))}, Grace: 50 * time.Millisecond})
		r.Handle(Source{}, session.AgentSettledEvent{})
		pid := filepath.Join(dir, "pid")
		proctest.Pid(t, pid) // the hook runs
		err := r.Close(context.Background())
		if err == nil || err.Error() != "hooks: killed at exit after the 50ms grace: 1 running hook(s) killed, 0 queued event(s) dropped" {
			t.Errorf("close: %v", err)
		}
		assertGone(t, pid)
	})
	t.Run("nothing running", func(t *testing.T) {
		r := New(Config{Hooks: []settings.Hook{hook(time.Minute, []string{"true"}, string(session.AgentSettled))}, Grace: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the grace is cut short, and there was nothing to kill
		if err := r.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}
