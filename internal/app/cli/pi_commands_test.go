package cli

import (
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestPiRpcCommands drives rally with the RpcClient of pi 1.6
// (testdata/pi-commands.mjs) through every command of pi's protocol that
// the retry core does not use: thinking levels, queue modes, bash and
// abort_bash, export_html, get_entries and get_tree, fork, clone,
// switch_session, get_commands and cycle_model, each checked against pi's
// response shapes. The fake LLM then shows that the bash output reached
// the model with the next prompt, in pi's words.
func TestPiRpcCommands(t *testing.T) {
	node, pkg := nodePackage(t, "PI16_DIR", "dist/modes/rpc/rpc-client.js",
		"npm install --prefix /tmp/pi16 @earendil-works/pi-coding-agent@1.6.0 and set PI16_DIR=/tmp/pi16/node_modules/@earendil-works/pi-coding-agent")
	testdata := testdataDir(t)
	isolate(t)
	fake := llmtest.NewServer(t)
	var res struct {
		AbortBashMs float64 `json:"abortBashMs"`
	}
	runNode(t, node, filepath.Join(testdata, "pi-commands.mjs"), &res, "PI16_DIR="+pkg,
		"SHIM="+filepath.Join(testdata, "pi-shim.mjs"), "DIR="+t.TempDir(), "URL="+fake.URL+"/v1")
	// The first prompt's request carries both commands' output (a user
	// message each, the cancelled one too, as pi sends it) before the
	// prompt: system, echo, sleep, prompt.
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Messages != 4 {
		t.Fatalf("the first model request: %+v, want 4 messages (system, two bash outputs, the prompt)", reqs)
	}
	t.Logf("pi 1.6 RpcClient: abort_bash answered in %.0f ms", res.AbortBashMs)
}
