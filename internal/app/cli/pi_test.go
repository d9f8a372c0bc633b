package cli

import (
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
	node, _ = nodePackage(t, "PI_CODING_AGENT_DIR", filepath.Join("dist", filepath.FromSlash(file)),
		"npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1 and set PI_CODING_AGENT_DIR=/tmp/pi/node_modules/@mariozechner/pi-coding-agent")
	return node, testdataDir(t)
}
