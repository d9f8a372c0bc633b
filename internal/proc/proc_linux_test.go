package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// helperEnv, when set, makes the test binary a stand-in for rally: it
// starts a command with Group, writes the command's pid to the file the
// variable names and waits to be killed.
const helperEnv = "PROC_TEST_PID_FILE"

func TestMain(m *testing.M) {
	if file := os.Getenv(helperEnv); file != "" {
		cmd := exec.CommandContext(context.Background(), "sleep", "30")
		Group(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
			os.Exit(2)
		}
		// Wait in a system call until the test kills us. Not select{}:
		// with no other goroutine the runtime calls that a deadlock and
		// exits, which fired the death signal early, so that the test
		// sometimes found the command already dead before it killed the
		// parent.
		cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDiesWithParent: a command started with Group dies when the program
// that started it is killed with SIGKILL, which runs no cleanup of its
// own; without the death signal the sleep would run on for 30 s.
func TestDiesWithParent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), helperEnv+"="+file)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	pid := proctest.Pid(t, file)
	if !proctest.Alive(pid) {
		t.Fatal("the command is not running before its parent is killed")
	}
	parent.Process.Kill()
	parent.Wait()
	proctest.Dead(t, pid)
}
