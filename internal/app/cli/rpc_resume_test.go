package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPiRpcClientResume drives rally with pi's own RpcClient
// (testdata/pi-resume.mjs) through a Responses stream that drops at 70 %
// and is resumed from its cursor: pi's promptAndWait gets one message whose
// updates pause and go on, no message_end with an error, no discarded
// text, and rally's auto_retry_start / stream_resumed / auto_retry_end
// inside it. Skipped without node and pi, except in CI.
func TestPiRpcClientResume(t *testing.T) {
	node, testdata := piNode(t, "modes/rpc/rpc-client.js")
	srv, dir, want := droppedResponses(t)
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
