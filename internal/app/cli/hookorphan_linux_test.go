package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestHookEnvClearedSetsidChildDies (issue 24, defect 11): a hook that
// starts a process with an empty environment in a session of its own
// (env -i setsid: no mark, no process group leads back to it) leaves
// nothing running once a real rally run ends, whether the hook exits or
// is killed at its timeout: rally adopted it as a child subreaper and
// killed it when the hook's run ended.
// agentEndHook writes a project settings file with one hook on agent_end
// that runs script with sh.
func agentEndHook(t *testing.T, script string, timeoutMs int) {
	t.Helper()
	if err := os.MkdirAll(".rally", 0o755); err != nil {
		t.Fatal(err)
	}
	hook := map[string]any{"on": []string{"agent_end"}, "command": []string{"sh", "-c", script}, "timeoutMs": timeoutMs}
	b, _ := json.Marshal(map[string]any{"hooks": []any{hook}})
	if err := os.WriteFile(".rally/settings.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHookEnvClearedSetsidChildDies(t *testing.T) {
	const orphan = `env -i setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' </dev/null >/dev/null 2>&1 &
while [ ! -s escaped.pid ]; do sleep 0.01; done`
	tests := []struct {
		name, script string
		timeoutMs    int
		args         []string
	}{
		{"rally -p, the hook exits", orphan, 10000, []string{"-p", "What does rally do?"}},
		{"rally hooks test, the hook killed at its timeout", orphan + "; sleep 60", 1500, []string{"hooks", "test", "agent_end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			agentEndHook(t, tt.script, tt.timeoutMs)
			out, errOut, code := runMain(t, tt.args...)
			wd, _ := os.Getwd()
			pid := proctest.Pid(t, filepath.Join(wd, "escaped.pid"))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if proctest.Alive(pid) {
				t.Errorf("the hook's env -i setsid process %d runs on after rally exited %d\nstdout %s\nstderr %s", pid, code, out, errOut)
			}
		})
	}
}
