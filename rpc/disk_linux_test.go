package rpc

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
)

// TestFullDiskOverProcess: an RPC client is told when the session file
// cannot be written (session_error), the session goes on in memory
// (get_messages has every message), and rally exits 1 at the end.
func TestFullDiskOverProcess(t *testing.T) {
	isolate(t, "")
	disk := proctest.SmallDisk(t, "64k")
	bash := func(id, command string) llmtest.Step {
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"` + command + `"}`}}}
	}
	srv := llmtest.NewServer(t,
		bash("call_1", "head -c 1000000 /dev/zero > "+disk+"/fill 2>/dev/null; seq 1 3000"),
		bash("call_2", "rm "+disk+"/fill; echo freed"),
		llmtest.Step{Text: "All done."})
	p := startProc(t, "--session-dir", disk, "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
	p.send(`{"id":"p1","type":"prompt","message":"fill the disk"}`)
	e := p.event(session.SessionError)
	if e["op"] != "save message" || !strings.Contains(e["error"].(string), "no space left on device") {
		t.Errorf("session_error %v", e)
	}
	p.event(session.AgentSettled)
	p.send(`{"id":"m1","type":"get_messages"}`)
	msgs := p.response("m1")["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 6 {
		t.Errorf("%d messages in memory, want 6", len(msgs))
	}
	err := p.stop()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(p.stderrText(), "rally: the session was not fully saved: ") {
		t.Errorf("exit %v, stderr:\n%s", err, p.stderrText())
	}
}
