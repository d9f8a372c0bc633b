package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
