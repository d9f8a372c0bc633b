package proctest

import (
	"os"
	"strconv"
	"testing"
)

// TestAlone: the work after Alone runs in a child process of this one,
// never in the test's own process.
func TestAlone(t *testing.T) {
	if os.Getenv(aloneEnv) == "" {
		t.Setenv("PROCTEST_PARENT", strconv.Itoa(os.Getpid()))
	}
	if !Alone(t) {
		return
	}
	if parent := os.Getenv("PROCTEST_PARENT"); parent == strconv.Itoa(os.Getpid()) || parent != strconv.Itoa(os.Getppid()) {
		t.Errorf("the work ran in process %d (parent %d), want a child of %s", os.Getpid(), os.Getppid(), parent)
	}
}
