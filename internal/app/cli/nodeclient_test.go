package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodePackage returns node's path and the folder of an npm package that a
// compatibility test drives rally with, named by the environment variable
// env (.ci/run installs each one and sets it). file is a file the package
// must hold. Without them the test is skipped, except in CI (CI=true),
// where a test that cannot run is a failure.
func nodePackage(t *testing.T, env, file, install string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	dir = os.Getenv(env)
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	case dir == "":
		missing = env + " is not set"
	default:
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			missing = env + " does not hold " + file + ": " + err.Error()
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this compatibility test cannot run in CI: %s (see .ci/run)", missing)
		}
		t.Skipf("%s; install it with: %s", missing, install)
	}
	return node, dir
}

// testdataDir is the absolute path of testdata, where the client scripts
// are: call it before isolate, which changes the working directory.
func testdataDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runNode runs the script (a path) with node, rally standing by as
// RALLY_BIN (this test binary, run as rally), and decodes the JSON line
// the script prints last, which must say "ok": true, into res.
func runNode(t *testing.T, node, script string, res any, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(append(os.Environ(), "RALLY_TEST_AS_MAIN=1", "RALLY_BIN="+os.Args[0]), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := []byte(lines[len(lines)-1])
	var ok struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(last, &ok) != nil || !ok.OK || json.Unmarshal(last, res) != nil {
		t.Fatalf("%s: result %q\n%s", script, last, out)
	}
}
