//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestGroupCancel: cancelling the context kills the command's whole
// group, including a child the shell is waiting for, and once the group
// is empty a late Cancel reports the process done.
func TestGroupCancel(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `sleep 30 & echo $! > "$0"; wait`, file)
	Group(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	leader := cmd.Process.Pid
	child := proctest.Pid(t, file)
	for _, pid := range []int{leader, child} {
		if pg, err := syscall.Getpgid(pid); err != nil || pg != leader {
			t.Fatalf("process %d is in group %d (%v), want %d", pid, pg, err, leader)
		}
	}
	cancel()
	cmd.Wait()
	if got := Describe(cmd.ProcessState); got != "signal killed" {
		t.Fatalf("the shell ended with %s, want signal killed", got)
	}
	proctest.Dead(t, child)
	proctest.Wait(t, "the group to empty", func() bool { return !GroupAlive(leader) })
	if err := cmd.Cancel(); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("cancel of an empty group: %v", err)
	}
}

// TestKillGroup: a group outlives a leader that left a background process
// behind, until KillGroup kills it; an empty group is not alive and
// KillGroup says so.
func TestKillGroup(t *testing.T) {
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	Group(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	leader := cmd.Process.Pid
	child, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("output %q", out)
	}
	if !GroupAlive(leader) || !proctest.Alive(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("group alive %v, child alive %v after the leader ended", GroupAlive(leader), proctest.Alive(child))
	}
	if err := KillGroup(leader); err != nil {
		t.Fatal(err)
	}
	proctest.Dead(t, child)
	proctest.Wait(t, "the group to empty", func() bool { return !GroupAlive(leader) })
	if err := KillGroup(leader); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill of an empty group: %v, want ESRCH", err)
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		script string
		want   string
	}{
		{"exit 0", "exit status 0"},
		{"exit 3", "exit status 3"},
		{"kill -KILL $$", "signal killed"},
		{"kill -TERM $$", "signal terminated"},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", c.script)
			cmd.Run()
			if got := Describe(cmd.ProcessState); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
