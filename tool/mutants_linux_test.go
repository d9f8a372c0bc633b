package tool

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestBackgroundSurvivesCleanExit: a command that exits on its own leaves
// its background process running (Procs kills it at rally's exit). Bug
// caught (a surviving mutant): the group killed after every command, not
// only after a timeout or abort. TestProcs checks the process is alive
// right after, which a SIGKILL still on its way passes; here a SIGKILL
// pending in the kernel counts as killed, so the check needs no wait.
func TestBackgroundSurvivesCleanExit(t *testing.T) {
	var procs Procs
	defer procs.Kill()
	b := Bash{Dir: t.TempDir(), Procs: &procs}
	res, err := call(t, b, map[string]any{"command": "sleep 30 >/dev/null 2>&1 & echo $!"})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(textOf(res)))
	if err != nil {
		t.Fatalf("output %q", textOf(res))
	}
	if !proctest.Alive(pid) || killPending(t, pid) {
		t.Errorf("the background process was killed when its command exited")
	}
}

// killPending reports whether pid has a SIGKILL pending (sent, not yet
// acted on), from the process-wide pending mask in /proc/PID/status.
func killPending(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true // gone
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ShdPnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatalf("ShdPnd %q: %v", v, err)
			}
			return mask&(1<<(syscall.SIGKILL-1)) != 0
		}
	}
	t.Fatal("no ShdPnd in /proc status")
	return false
}

// TestCaptureFullDisk: a saved file that cannot be written (a full disk)
// is reported as lost, with the reason. Bug caught (a surviving mutant):
// the first write error not recorded, so the note said nothing of it.
func TestCaptureFullDisk(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	c := &capture{max: 4, maxLines: 10, spillMax: 100, file: full}
	c.Write([]byte("0123456789"))
	c.close()
	if _, note := c.text(); !strings.Contains(note, "could not be saved") || !strings.Contains(note, "no space left on device") {
		t.Errorf("note %q, want the full disk named", note)
	}
}
