package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestPiRpcClientResume drives rally with pi's own RpcClient
// (testdata/pi-resume.mjs) through a Responses stream that drops at 70 %
// and is resumed from its cursor: pi's promptAndWait gets one message whose
// updates pause and go on, no message_end with an error, no discarded
// text, and rally's auto_retry_start / stream_resumed / auto_retry_end
// inside it. Skipped without node and pi, except in CI.
func TestPiRpcClientResume(t *testing.T) {
	node, testdata := piNode(t, "modes/rpc/rpc-client.js")
	isolate(t)
	words := strings.Fields(strings.Repeat("resumed streams carry on where they stopped ", 4))
	want := strings.Join(words, " ")
	srv := llmtest.NewServer(t, llmtest.Step{Text: want, Fault: llmtest.Drop, After: len(words) * 7 / 10, Delay: time.Millisecond})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".rally"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"retry":{"baseDelayMs":1,"streaming":"resume"},"providers":{"fake":{"api":"openai-responses","baseUrl":"` + srv.URL + `/v1","resume":true}}}`
	if err := os.WriteFile(filepath.Join(dir, ".rally", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Types []string `json:"types"`
	}
	runNode(t, node, filepath.Join(testdata, "pi-resume.mjs"), &res,
		"SHIM="+filepath.Join(testdata, "pi-shim.mjs"), "DIR="+dir, "WANT="+want)
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Method != "GET" || !strings.HasPrefix(reqs[1].Outcome, "resumed after") {
		t.Errorf("requests %+v, want the call and one resume", reqs)
	}
	t.Logf("pi RpcClient saw %v", res.Types)
}
