package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// droppedResponses isolates the test and returns a fake Responses API
// whose one answer, want, drops at 70 % and can be resumed from its
// cursor, and a project folder whose provider "fake" (model m) resumes
// it (retry.streaming "resume").
func droppedResponses(t *testing.T) (srv *llmtest.Server, dir, want string) {
	t.Helper()
	isolate(t)
	words := strings.Fields(strings.Repeat("resumed streams carry on where they stopped ", 4))
	want = strings.Join(words, " ")
	srv = llmtest.NewServer(t, llmtest.Step{Text: want, Fault: llmtest.Drop, After: len(words) * 7 / 10, Delay: time.Millisecond})
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".rally"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"retry":{"baseDelayMs":1,"streaming":"resume"},"providers":{"fake":{"api":"openai-responses","baseUrl":"` + srv.URL + `/v1","resume":true}}}`
	if err := os.WriteFile(filepath.Join(dir, ".rally", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, dir, want
}

// TestACPStreamResume: a Responses stream that drops at 70 % and is
// resumed from its cursor reaches an ACP client (the official SDK's) as
// one answer, streamed once and uninterrupted, with the reconnect told as
// thoughts (_meta.rally.resume, then _meta.rally.streamResumed), never as
// a retry: no "Retrying (1/3)" line and no _meta.rally.retry, since the
// same call goes on and no new attempt is made.
func TestACPStreamResume(t *testing.T) {
	node, sdkDir := nodePackage(t, "ACP_SDK_DIR", "dist/v1/stable/acp.js",
		"npm install --prefix /tmp/acp @agentclientprotocol/sdk@2.4.0 and set ACP_SDK_DIR=/tmp/acp/node_modules/@agentclientprotocol/sdk")
	testdata := testdataDir(t)
	srv, dir, want := droppedResponses(t)
	args, _ := json.Marshal([]string{"--no-session", "--provider", "fake", "--model", "m"})
	var res struct {
		StopReason string `json:"stopReason"`
		Updates    []struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta struct {
				Rally map[string]json.RawMessage `json:"rally"`
			} `json:"_meta"`
		} `json:"updates"`
	}
	runNode(t, node, filepath.Join(testdata, "acp-resume.mjs"), &res, "ACP_SDK_DIR="+sdkDir, "DIR="+dir, "RALLY_ARGS="+string(args))
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].Method != "GET" || !strings.HasPrefix(reqs[1].Outcome, "resumed after") {
		t.Fatalf("requests %+v, want the call and one resume", reqs)
	}
	var answer, thoughts strings.Builder
	var said []string // the rally _meta keys, in order
	for _, u := range res.Updates {
		switch u.SessionUpdate {
		case "agent_message_chunk":
			answer.WriteString(u.Content.Text)
		case "agent_thought_chunk":
			thoughts.WriteString(u.Content.Text)
		}
		for k := range u.Meta.Rally {
			said = append(said, u.SessionUpdate+" "+k)
		}
	}
	if res.StopReason != "end_turn" {
		t.Errorf("stop reason %q, want end_turn", res.StopReason)
	}
	if answer.String() != want {
		t.Errorf("the answer the editor shows:\n%q\nwant it streamed once, uninterrupted:\n%q", answer.String(), want)
	}
	if strings.Join(said, ", ") != "agent_thought_chunk resume, agent_thought_chunk streamResumed" {
		t.Errorf("rally _meta of the updates: %v, want a resume then streamResumed, both thoughts, and no retry", said)
	}
	if th := thoughts.String(); strings.Contains(th, "Retrying") || !strings.Contains(th, "reconnecting") || !strings.Contains(th, "Reconnected") {
		t.Errorf("thoughts %q, want the reconnect and its end told, no retry", th)
	}
}
