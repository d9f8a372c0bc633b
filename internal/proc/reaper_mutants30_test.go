//go:build linux

package proc

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

	"github.com/rally-agent/rally/internal/proctest"
)

// The tests in this file each catch mutants that lived through the hooks
// and proc tests (issue 30, third round).

// orphanParent starts, as a tool does (Group), a shell that leaves a
// background sleep and exits, and returns the parent the orphaned sleep
// has then.
func orphanParent(t *testing.T) int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pid")
	cmd := exec.CommandContext(t.Context(), "sh", "-c", `sleep 60 </dev/null >/dev/null 2>&1 & echo $! > "$0"`, file)
	Group(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := proctest.Pid(t, file)
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil) // reaped if adopted; ECHILD if init has it
	})
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// TestAdoptOrphansCounted (reaper_linux.go `adoption.users++`,
// `adoption.users--`, `adoption.users == 0`): the process adopts orphans
// while any user of AdoptOrphans has not stopped, and no longer once the
// last one has, so a rally whose hooks runner closed stops taking in
// what its tools leave behind.
func TestAdoptOrphansCounted(t *testing.T) {
	self := os.Getpid()
	stop1, ok := AdoptOrphans()
	if !ok {
		t.Fatal("the kernel refused PR_SET_CHILD_SUBREAPER")
	}
	stop2, _ := AdoptOrphans()
	stop1()
	stop1() // a second call does nothing
	if got := orphanParent(t); got != self {
		t.Errorf("with one user left the orphan's parent is %d, want this process %d", got, self)
	}
	stop2()
	if got := orphanParent(t); got == self {
		t.Errorf("after the last user stopped the orphan's parent is this process %d", got)
	}
}

// TestKillMarked (marked_linux.go, every comparison: Linux's fallback for
// a hook whose orphans rally cannot adopt): KillMarked kills each process
// of this user whose environment holds the mark, even in a session of
// its own, says it killed one, and leaves other processes alone. (It may
// count a process twice when its next round comes before the kill lands,
// so the count is checked to be at least one.)
func TestKillMarked(t *testing.T) {
	mark := "RALLY_TEST_MARK=" + strconv.Itoa(os.Getpid()) + "." + t.Name()
	start := func(env ...string) *exec.Cmd {
		cmd := exec.CommandContext(context.Background(), "sleep", "60")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	marked, other := start(mark), start("RALLY_TEST_MARK=other")
	if n := KillMarked(mark); n < 1 {
		t.Errorf("KillMarked says it killed %d processes, want the marked one", n)
	}
	if !proctest.Alive(other.Process.Pid) {
		t.Error("a process without the mark was killed")
	}
	marked.Process.Kill() // so that a failed KillMarked costs no 60 s
	marked.Wait()
	if st := marked.ProcessState; st == nil || t.Failed() {
		return
	}
	if n := KillMarked(mark); n != 0 {
		t.Errorf("KillMarked after the marked process ended killed %d, want 0", n)
	}
}

// TestKillEscapedOnlyTheNew (reaper_linux.go children, readStat, adopted,
// escaped, KillEscaped and ReapAdopted, which only the hooks tests ran):
// with the process adopting orphans, a process that left its session
// (setsid) after Escaped was taken is killed and reaped by KillEscaped,
// which counts it; one that had escaped before, and an orphan still in
// this session (a tool's background process), are left running.
func TestKillEscapedOnlyTheNew(t *testing.T) {
	stop, ok := AdoptOrphans()
	if !ok {
		t.Fatal("the kernel refused PR_SET_CHILD_SUBREAPER")
	}
	defer stop()
	dir := t.TempDir()
	leave := func(name, body string) int {
		t.Helper()
		file := filepath.Join(dir, name)
		cmd := exec.CommandContext(t.Context(), "sh", "-c", body+` </dev/null >/dev/null 2>&1 & echo $! > "$0"`, file)
		Group(cmd)
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		pid := proctest.Pid(t, file)
		t.Cleanup(func() {
			syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		})
		proctest.Wait(t, name+" in a session of its own or not", func() bool {
			c, ok := readStat(pid)
			return ok && (c.sid == pid) == strings.HasPrefix(body, "exec setsid")
		})
		return pid
	}
	old := leave("old", "exec setsid sleep 60")
	before := Escaped()
	if !before[old] {
		t.Fatalf("Escaped %v lacks the setsid orphan %d", before, old)
	}
	tool := leave("tool", "exec sleep 60")
	escaped := leave("new", "exec setsid sleep 60")
	if n := KillEscaped(before); n != 1 {
		t.Errorf("KillEscaped killed %d, want 1", n)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(escaped)); err == nil {
		t.Errorf("the new setsid orphan %d still exists (running or a zombie)", escaped)
	}
	for name, pid := range map[string]int{"the orphan that escaped before": old, "the tool's orphan": tool} {
		if !proctest.Alive(pid) {
			t.Errorf("%s (%d) was killed", name, pid)
		}
	}
	syscall.Kill(tool, syscall.SIGKILL)
	proctest.Wait(t, "the killed tool orphan to be reaped", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(tool))
		return err != nil
	})
}
