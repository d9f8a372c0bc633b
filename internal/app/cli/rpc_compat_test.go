package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestPiRpcClient drives rally with the pi coding agent's own TypeScript
// RpcClient (testdata/pi-compat.mjs): prompt, get_state, set_auto_retry,
// abort_retry and the retry events, as a client written for pi sees them.
// It needs node and the npm package @mariozechner/pi-coding-agent, whose
// folder PI_CODING_AGENT_DIR names (.ci/run installs it). Without them
// it is skipped, except in CI (CI=true), where that is a failure.
func TestPiRpcClient(t *testing.T) {
	node, testdata := piNode(t, "modes/rpc/rpc-client.js")
	isolate(t)
	project := func(baseDelayMs string) string {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".rally"), 0o755)
		os.WriteFile(filepath.Join(dir, ".rally", "settings.json"), []byte(`{"retry":{"baseDelayMs":`+baseDelayMs+`}}`), 0o644)
		return dir
	}
	slow := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
	fast := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "Recovered after a retry"})
	overflow := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overflow}
	over := llmtest.NewServer(t, llmtest.Step{Text: "first answer"}, overflow, llmtest.Step{Text: "## Goal\nsummary"}, overflow, llmtest.Step{Text: "never"})

	var res struct {
		AbortRetryMs float64 `json:"abortRetryMs"`
	}
	runNode(t, node, filepath.Join(testdata, "pi-compat.mjs"), &res,
		"SHIM="+filepath.Join(testdata, "pi-shim.mjs"),
		"SLOW_DIR="+project("5000"), "SLOW_URL="+slow.URL+"/v1",
		"FAST_DIR="+project("1"), "FAST_URL="+fast.URL+"/v1",
		"OVER_DIR="+project("1"), "OVER_URL="+over.URL+"/v1",
	)
	// The repeated overflow: the first answer, the overflow, one summary,
	// the retried request's overflow, and nothing after it.
	if n := len(over.Requests()); n != 4 {
		t.Errorf("the repeated overflow made %d requests, want 4", n)
	}
	t.Logf("pi RpcClient: abort_retry → auto_retry_end in %.2f ms", res.AbortRetryMs)
}
