package hooks

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proc"
	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// startTool runs body as the bash tool runs a command (proc.Group: a
// process group of its own in this process's session) and waits for it;
// what it leaves running is an orphan this process adopts.
func startTool(t *testing.T, dir, body string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", "-c", body)
	cmd.Dir = dir
	proc.Group(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

// sessionLeader reports whether pid has called setsid.
func sessionLeader(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 3 && f[3] == strconv.Itoa(pid)
}

// gone reports that pid is neither running nor a zombie nobody reaped.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err != nil
}

// TestHookOrphanWithoutMarkDies (issue 24, defect 11): a hook that leaves
// a process in a session of its own with an empty environment (env -i
// setsid), which neither its process group nor its mark leads back to, does
// not leave it running: rally, a child subreaper while it runs hooks,
// adopts it and kills it when the run ends. What tools left running is
// not touched: a background process in a tool's group, and one that left
// its session before the hook started. An adopted process that ends is
// reaped, not left a zombie.
func TestHookOrphanWithoutMarkDies(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, dir, "h", `cd "$1" && env -i setsid sh -c 'echo $$ > hook.pid; exec sleep 60' </dev/null >/dev/null 2>&1 &
while [ ! -s "$1/hook.pid" ]; do sleep 0.01; done`)
	r := New(Config{Hooks: []settings.Hook{hook(30*time.Second, []string{sh, dir}, string(session.AgentSettled))}})
	defer r.Close(context.Background())

	startTool(t, dir, `sleep 60 </dev/null >/dev/null 2>&1 & echo $! > tool.pid`)
	tool := proctest.Pid(t, filepath.Join(dir, "tool.pid"))
	t.Cleanup(func() { syscall.Kill(tool, syscall.SIGKILL) })
	startTool(t, dir, `setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > toolsid.pid`)
	toolSid := proctest.Pid(t, filepath.Join(dir, "toolsid.pid"))
	t.Cleanup(func() { syscall.Kill(toolSid, syscall.SIGKILL) })
	proctest.Wait(t, "the tool's setsid", func() bool { return sessionLeader(toolSid) })

	res := r.Test(context.Background(), Source{}, session.AgentSettledEvent{})
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("results %+v, want one clean run", res)
	}
	orphan := proctest.Pid(t, filepath.Join(dir, "hook.pid"))
	t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
	if !gone(orphan) {
		t.Errorf("the hook's env -i setsid process %d still exists after the run", orphan)
	}
	for name, pid := range map[string]int{"a tool's background process": tool, "a tool's setsid process from before the hook": toolSid} {
		if !proctest.Alive(pid) {
			t.Errorf("%s (%d) was killed by the hook's cleanup", name, pid)
		}
	}
	syscall.Kill(tool, syscall.SIGKILL)
	proctest.Wait(t, "the adopted tool process to be reaped", func() bool { return gone(tool) })
}
