package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// piNode returns node, and the absolute path of testdata (where the
// scripts are), for a test that runs the pi coding agent's own code, the
// file of its npm package (dist/…) the test needs included. They need
// node and the package @mariozechner/pi-coding-agent, whose folder
// PI_CODING_AGENT_DIR names (.ci/run installs it). Without them the test
// is skipped, except in CI (CI=true), where that is a failure.
func piNode(t *testing.T, file string) (node, testdata string) {
	t.Helper()
	node, err := exec.LookPath("node")
	pkg := os.Getenv("PI_CODING_AGENT_DIR")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	case pkg == "":
		missing = "PI_CODING_AGENT_DIR is not set"
	default:
		if _, err := os.Stat(filepath.Join(pkg, "dist", filepath.FromSlash(file))); err != nil {
			missing = "no " + file + " in PI_CODING_AGENT_DIR: " + err.Error()
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the pi compatibility test cannot run in CI: %s (see .ci/run)", missing)
		}
		t.Skipf("%s; install it with: npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1 and set PI_CODING_AGENT_DIR=/tmp/pi/node_modules/@mariozechner/pi-coding-agent", missing)
	}
	testdata, err = filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return node, testdata
}
