package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/rpc"
)

// TestTmuxStatusAgreesWithStats: after a retry, an abort and a compaction
// the status line's context size and cost are what get_session_stats
// reports for the same session (its file, reopened over RPC once the UI
// quit). The UI once counted usage its own way: an aborted answer's
// usage, nothing estimated, 0 after a compaction.
func TestTmuxStatusAgreesWithStats(t *testing.T) {
	slow := llmtest.Step{Text: "Streaming slowly so that Esc lands in the middle of this answer.", Chunks: 12, Delay: 300 * time.Millisecond}
	cases := []struct {
		name  string
		steps []llmtest.Step
		args  []string // nil: the fake LLM
		drive func(p *pane)
	}{
		{"retry", []llmtest.Step{{Fault: llmtest.HTTPError, Status: 503}, {Text: "Recovered after one retry.", Usage: &llmtest.Usage{Input: 1200, Output: 34}}}, nil,
			func(p *pane) {
				p.typeLine("What does rally do?")
				p.waitFor("the retried answer", func(s string) bool { return strings.Contains(s, "Recovered after one retry.") && idle(s) })
			}},
		{"abort", []llmtest.Step{{Text: "A first answer.", Usage: &llmtest.Usage{Input: 120, Output: 34}}, slow}, nil,
			func(p *pane) {
				p.typeLine("first")
				p.waitFor("the first answer", func(s string) bool { return strings.Contains(s, "A first answer.") && idle(s) })
				p.typeLine("second")
				p.waitText("Streaming slowly")
				p.keys("Escape")
				p.waitFor("the abort", func(s string) bool { return strings.Contains(s, "Operation aborted") && idle(s) })
			}},
		{"compaction", nil, []string{"--provider", "sim", "--model", "sim-tiny"},
			func(p *pane) {
				p.typeLine("run seq 1 200 then seq 201 400")
				p.waitFor("the run", func(s string) bool { return strings.Contains(s, "Done: 2 steps") && idle(s) })
				p.typeLine("/compact")
				p.waitFor("the compaction", func(s string) bool { return strings.Contains(s, "Compacted (manual):") && idle(s) })
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "s.jsonl")
			flags := tc.args
			var srv *llmtest.Server
			if flags == nil {
				srv = llmtest.NewServer(t, tc.steps...)
				flags = fakeFlags(srv)
			}
			p := startRallyIn(t, dir, srv, 120, 30, "", append(append([]string(nil), tc.args...), "--session", file)...)
			tc.drive(p)
			lines := strings.Split(strings.TrimRight(p.screen(), "\n"), "\n")
			status := lines[len(lines)-1]
			p.keys("C-d")
			p.waitExit()

			t.Setenv("RALLY_HOME", filepath.Join(dir, "home"))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := rpc.Start(ctx, rallyBinary(t), append(flags, "--session", file)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			st, err := c.GetSessionStats(ctx)
			if err != nil || st.ContextUsage == nil {
				t.Fatalf("get_session_stats %+v, %v", st, err)
			}
			want := fmt.Sprintf("ctx %s/%s · $%.4f", tokens(st.ContextUsage.Tokens), tokens(st.ContextUsage.ContextWindow), st.Cost)
			if !strings.Contains(status, want) {
				t.Errorf("status line %q\nget_session_stats says %q", status, want)
			}
		})
	}
}

// TestTmuxQueueIsTheSessions: a prompt typed while a run streams waits in
// the session's follow-up queue (shown under the transcript) and is
// delivered by that run once the model stops: one more model call with
// the answer and the queued prompt in its context, and one operation (one
// agent_settled, counted by a hook), not a second prompt after it.
func TestTmuxQueueIsTheSessions(t *testing.T) {
	slow := llmtest.Step{Text: "Streaming slowly so that a second prompt is typed meanwhile.", Chunks: 12, Delay: 200 * time.Millisecond}
	srv := llmtest.NewServer(t, slow, llmtest.Step{Text: "Answer to the follow-up."})
	settings := `{"hooks": [{"on": ["agent_settled"], "command": ["sh", "-c", "echo settled >> settled.txt"]}]}`
	p := startRally(t, srv, 100, 30, settings)
	p.typeLine("first")
	p.waitText("Streaming slowly")
	p.typeLine("second")
	p.waitText("queued: second")
	s := p.waitFor("the follow-up's answer", func(s string) bool { return strings.Contains(s, "Answer to the follow-up.") && idle(s) })
	if strings.Contains(s, "queued:") || !strings.Contains(s, "› second") {
		t.Errorf("after the run:\n%s", s)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Messages != reqs[0].Messages+2 {
		t.Fatalf("requests %+v, want the follow-up sent in the run's second call after the first answer", reqs)
	}
	p.keys("C-d")
	p.waitExit()
	if got, _ := os.ReadFile(filepath.Join(p.dir, "settled.txt")); string(got) != "settled\n" {
		t.Errorf("agent_settled hooks ran %q, want once: the follow-up is part of the run", got)
	}
}
