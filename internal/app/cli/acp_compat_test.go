package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// acpScenarios runs testdata/acp-client.mjs (the official ACP SDK's
// client) against rally, natively (agent "rally") or through pi-acp with
// rally as its pi (agent "pi-acp"), and checks what only the fake LLMs and
// the project folders can tell: no request after a cancel, no tool run
// after a refusal.
func acpScenarios(t *testing.T, agent string, env ...string) map[string]any {
	t.Helper()
	node, sdkDir := nodePackage(t, "ACP_SDK_DIR", "dist/v1/stable/acp.js",
		"npm install --prefix /tmp/acp @agentclientprotocol/sdk@2.4.0 and set ACP_SDK_DIR=/tmp/acp/node_modules/@agentclientprotocol/sdk")
	testdata := testdataDir(t)
	isolate(t)
	// pi-acp keeps its map of session ids to files in ~/.pi/pi-acp, read,
	// changed and written whole by each process. With the real home, runs
	// side by side (CI's two time-zone reruns) lost each other's entries
	// ("Unknown sessionId" on session/load), and every run left its
	// sessions in the user's map.
	t.Setenv("HOME", t.TempDir())
	project := func(settings string) string {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".rally"), 0o755)
		os.WriteFile(filepath.Join(dir, ".rally", "settings.json"), []byte(settings), 0o644)
		return dir
	}
	plain := llmtest.NewServer(t)
	retried := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "Recovered after a retry"})
	slow := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
	tools := llmtest.NewServer(t,
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: `{"command":"echo acp-allowed"}`}}},
		llmtest.Step{Text: "ran it"},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: `{"command":"touch rejected-ran"}`}}},
		llmtest.Step{Text: "did not run it"},
	)
	toolDir := project(`{"tools":{"confirm":["bash"]}}`)

	res := map[string]any{}
	runNode(t, node, filepath.Join(testdata, "acp-client.mjs"), &res, append([]string{
		"AGENT=" + agent, "ACP_SDK_DIR=" + sdkDir, "DEFAULT_TEXT=" + llmtest.DefaultText,
		"PLAIN_DIR=" + project(`{}`), "PLAIN_URL=" + plain.URL + "/v1",
		"RETRY_DIR=" + project(`{"retry":{"baseDelayMs":1}}`), "RETRY_URL=" + retried.URL + "/v1",
		"SLOW_DIR=" + project(`{"retry":{"baseDelayMs":5000}}`), "SLOW_URL=" + slow.URL + "/v1",
		"TOOL_DIR=" + toolDir, "TOOL_URL=" + tools.URL + "/v1",
	}, env...)...)
	if n := len(slow.Requests()); n != 1 {
		t.Errorf("the cancelled backoff was followed by %d requests in all, want the first one only", n)
	}
	if _, err := os.Stat(filepath.Join(toolDir, "rejected-ran")); err == nil {
		t.Error("the tool call the user rejected ran")
	}
	return res
}

// TestACPClient drives `rally --mode acp` with the official ACP SDK's
// client: a plain answer streamed once, a second prompt, session/load of
// the session in a new process, a 503 retried with the retry visible (and
// its _meta), session/cancel during a 5 s backoff answered "cancelled"
// before the backoff ends with no further request (the time it took is
// logged: how fast is a benchmark figure), and a tools.confirm permission
// request answered yes and then no.
func TestACPClient(t *testing.T) {
	res := acpScenarios(t, "rally")
	t.Logf("native ACP: session/cancel during a backoff → cancelled in %.1f ms", res["cancelMs"])
}

// TestPiACP runs the same scenarios through the published pi-acp adapter
// (PI_ACP_BIN), which spawns rally as its `pi --mode rpc --no-themes`.
func TestPiACP(t *testing.T) {
	_, dir := nodePackage(t, "PI_ACP_DIR", "dist/index.js",
		"npm install --prefix /tmp/acp pi-acp@0.0.34 and set PI_ACP_DIR=/tmp/acp/node_modules/pi-acp")
	wrapper := filepath.Join(t.TempDir(), "pi")
	script := "#!/bin/sh\nRALLY_TEST_AS_MAIN=1 exec \"" + os.Args[0] + "\" \"$@\" $RALLY_FLAGS\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res := acpScenarios(t, "pi-acp", "PI_ACP_BIN="+filepath.Join(dir, "dist", "index.js"), "PI_WRAPPER="+wrapper)
	t.Logf("pi-acp with rally as pi: session/cancel during a backoff → cancelled in %.1f ms", res["cancelMs"])
}
