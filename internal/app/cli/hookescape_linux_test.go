package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestHookSetsidChildDies: a hook that starts a process in a session of
// its own (setsid, so outside the process group rally kills) does not
// leave it running, whether the hook ends by itself or is killed at its
// timeout. rally finds it by the mark (RALLY_HOOK_RUN) in the environment
// it inherited; before, it ran on under init.
func TestHookSetsidChildDies(t *testing.T) {
	tests := []struct {
		name, script string
		timeoutMs    int
	}{
		{"hook exits", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > escaped.pid`, 5000},
		{"hook killed at its timeout", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > escaped.pid; sleep 300`, 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			agentEndHook(t, tt.script, tt.timeoutMs)
			_, errOut, _ := runMain(t, "hooks", "test", "agent_end")
			wd, _ := os.Getwd()
			pid := proctest.Pid(t, filepath.Join(wd, "escaped.pid"))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			proctest.Dead(t, pid)
			if strings.Contains(errOut, "RALLY_HOOK_RUN") {
				t.Errorf("stderr names the mark: %s", errOut)
			}
		})
	}
}
