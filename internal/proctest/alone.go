package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// aloneEnv names, in a child started by Alone, the test it runs.
const aloneEnv = "RALLY_TEST_ALONE"

// Alone runs the calling top-level test again in a child process of the
// test binary (os.Args[0] -test.run=^Name$), and reports whether the caller
// is that child, the one that should do the test's work. A test that
// measures the whole process (runtime.MemStats, the peak resident size)
// runs its work alone there, so no other test, nor what earlier tests
// left running, adds to its figures. The parent fails when the child
// fails, or did not run the test at all, and logs the child's output.
//
//	if !proctest.Alone(t) {
//		return // the child did the work and passed
//	}
func Alone(t *testing.T) (child bool) {
	t.Helper()
	name := t.Name()
	if strings.Contains(name, "/") {
		t.Fatalf("proctest.Alone: %s is a subtest; call it from a top-level test", name)
	}
	if os.Getenv(aloneEnv) == name {
		return true
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+regexp.QuoteMeta(name)+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), aloneEnv+"="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s alone in a child process: %v\n%s", name, err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
		t.Fatalf("the child process did not run %s:\n%s", name, out)
	}
	t.Logf("%s alone in a child process:\n%s", name, out)
	return false
}
