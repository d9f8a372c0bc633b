//go:build linux

package hooks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/settings"
)

// parentOf is pid's parent as /proc shows it, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// TestNoHooksAdoptNothing (a mutant that lived, issue 30 third round:
// hooks.go `len(cfg.Hooks) > 0`): a runner with no hooks leaves rally an
// ordinary process, not a child subreaper, so the background process a
// tool leaves goes to init as it always did instead of to rally.
func TestNoHooksAdoptNothing(t *testing.T) {
	r := New(Config{})
	defer r.Close(context.Background())
	dir := t.TempDir()
	startTool(t, dir, `sleep 60 </dev/null >/dev/null 2>&1 & echo $! > tool.pid`)
	pid := proctest.Pid(t, filepath.Join(dir, "tool.pid"))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if got := parentOf(pid); got == os.Getpid() || got == 0 {
		t.Errorf("the tool's orphan %d has parent %d; rally (%d) with no hooks must not adopt it", pid, got, os.Getpid())
	}
}

// TestFromSettingsGrace (a mutant no hooks test reached: hooks.go
// FromSettings, `HooksGraceMs * time.Millisecond`): hooksGraceMs is
// milliseconds.
func TestFromSettingsGrace(t *testing.T) {
	cfg := FromSettings(&settings.Settings{HooksGraceMs: 1500, HooksMaxProcesses: 3})
	if cfg.Grace != 1500*time.Millisecond || cfg.MaxProcs != 3 {
		t.Errorf("grace %v, max processes %d; want 1.5s and 3", cfg.Grace, cfg.MaxProcs)
	}
}
