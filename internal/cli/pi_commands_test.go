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
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	isolate(t)
	dir := t.TempDir()
	fake := llmtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testdata, "pi-commands.mjs"))
	cmd.Env = append(os.Environ(),
		"RALLY_TEST_AS_MAIN=1", "RALLY_BIN="+os.Args[0], "PI16_DIR="+pkg,
		"SHIM="+filepath.Join(testdata, "pi-shim.mjs"), "DIR="+dir, "URL="+fake.URL+"/v1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pi 1.6's RpcClient against rally: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res struct {
		OK          bool    `json:"ok"`
		AbortBashMs float64 `json:"abortBashMs"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || !res.OK {
		t.Fatalf("result %q: %v\n%s", lines[len(lines)-1], err, out)
	}
	// The first prompt's request carries both commands' output (a user
	// message each, the cancelled one too, as pi sends it) before the
	// prompt: system, echo, sleep, prompt.
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Messages != 4 {
		t.Fatalf("the first model request: %+v, want 4 messages (system, two bash outputs, the prompt)", reqs)
	}
	t.Logf("pi 1.6 RpcClient: abort_bash answered in %.0f ms", res.AbortBashMs)
}
