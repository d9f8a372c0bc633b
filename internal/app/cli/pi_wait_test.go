package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestPiRpcClientResetWait: pi's RpcClient sees a wait for a usage
// limit's reset as one auto_retry_start (with the whole delayMs, so its
// countdown is right) and one auto_retry_end, with retry_heartbeat in
// between, and abort_retry ends a two-hour wait at once
// (testdata/pi-wait.mjs).
func TestPiRpcClientResetWait(t *testing.T) {
	node, testdata := piNode(t, "modes/rpc/rpc-client.js")
	isolate(t)
	project := func() string {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".rally"), 0o755)
		os.WriteFile(filepath.Join(dir, ".rally", "settings.json"), []byte(`{"retry":{"waitForReset":{"enabled":true,"marginMs":0}}}`), 0o644)
		return dir
	}
	long := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 2 * time.Hour})
	short := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 2 * time.Second}, llmtest.Step{Text: "Back after the reset"})
	var res struct {
		AbortRetryMs float64 `json:"abortRetryMs"`
	}
	runNode(t, node, filepath.Join(testdata, "pi-wait.mjs"), &res,
		"SHIM="+filepath.Join(testdata, "pi-shim.mjs"),
		"LONG_DIR="+project(), "LONG_URL="+long.URL+"/v1",
		"SHORT_DIR="+project(), "SHORT_URL="+short.URL+"/v1",
	)
	if n := len(short.Requests()); n != 2 {
		t.Errorf("the short wait made %d requests, want 2 (the limit, then the answer after the reset)", n)
	}
	t.Logf("pi RpcClient: abort_retry ends a 2 h wait in %.2f ms", res.AbortRetryMs)
}
