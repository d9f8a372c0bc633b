package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestSwitchSessionResumesWait: RPC switch_session to a session file a
// rally was stopped in during a wait for a reset, or rally --mode rpc
// started on it, resumes the wait under retry.waitForReset, for the time
// left, then answers the interrupted prompt: one
// auto_retry_start/auto_retry_end pair the client sees.
func TestSwitchSessionResumesWait(t *testing.T) {
	for _, how := range []string{"switch_session", "--session"} {
		t.Run(how, func(t *testing.T) { resumesWaitOverRPC(t, how) })
	}
}

func resumesWaitOverRPC(t *testing.T, how string) {
	home := isolate(t)
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retry":{"waitForReset":{"enabled":true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stopped.jsonl")
	j, err := journal.CreateAt(path, "/w")
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(1500 * time.Millisecond)
	j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("refactor it")}, Timestamp: llm.Now()}, false)
	j.AppendWait(journal.Wait{Attempt: 1, MaxAttempts: 3, Until: until.UTC(), Reason: "429 usage limit"})
	j.Close()

	srv := llmtest.NewServer(t, llmtest.Step{Text: "refactored after the reset"})
	target := []string{"--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}
	var p *rpcProc
	if how == "--session" {
		p = startRPC(t, append([]string{"--session", path}, target...)...)
	} else {
		p = startRPC(t, append([]string{"--no-session"}, target...)...)
		b, _ := json.Marshal(map[string]string{"type": "switch_session", "id": "s", "sessionPath": path})
		p.send(string(b))
	}
	var seen []string
	var start map[string]any
	p.until("auto_retry_end", func(m map[string]any) bool {
		typ, _ := m["type"].(string)
		seen = append(seen, typ)
		if typ == "auto_retry_start" {
			start = m
		}
		return typ == "auto_retry_end"
	})
	p.event("agent_settled")
	if d, _ := start["delayMs"].(float64); d <= 0 || d > 1500 {
		t.Errorf("auto_retry_start %v, want the time left of the wait", start)
	}
	if strings.Count(strings.Join(seen, " "), "auto_retry_start") != 1 || !strings.Contains(strings.Join(seen, " "), "retry_waiting") {
		t.Errorf("events %v, want one retry_waiting and one auto_retry_start", seen)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Time.Before(until) {
		t.Fatalf("%d requests (%v), want one after the reset at %v", len(reqs), reqs, until)
	}
	if !strings.Contains(p.stderrText(), "was interrupted; resuming it") {
		t.Errorf("stderr %q", p.stderrText())
	}
}
