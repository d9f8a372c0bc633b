package rpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

func fakeArgs(srv *llmtest.Server) []string {
	return []string{"--no-session", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "fake-model"}
}

// TestRetryOverProcess: a retry is seen as auto_retry_start and
// auto_retry_end, and WaitSettled waits through it.
func TestRetryOverProcess(t *testing.T) {
	isolate(t, `{"retry":{"baseDelayMs":1}}`)
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "Recovered answer"})
	ctx := ctxT(t)
	c, err := Start(ctx, rallyBinary(t), fakeArgs(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := record(c)
	if err := c.Prompt(ctx, "hi", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	start, i := waitFor[session.AutoRetryStartEvent](t, rec, 0)
	if start.Attempt != 1 || start.MaxAttempts != 3 || start.DelayMs != 1 || start.ErrorClass != retry.Transient || !strings.Contains(start.ErrorMessage, "503") {
		t.Errorf("auto_retry_start %+v", start)
	}
	end, _ := waitFor[session.AutoRetryEndEvent](t, rec, i)
	if !end.Success || end.Attempt != 1 {
		t.Errorf("auto_retry_end %+v", end)
	}
	types := strings.Join(rec.types(), " ")
	if !strings.Contains(types, "agent_end auto_retry_start agent_start") || !strings.HasSuffix(types, "agent_settled") {
		t.Errorf("events %s", types)
	}
	if text, err := c.GetLastAssistantText(ctx); err != nil || text != "Recovered answer" {
		t.Errorf("answer %q %v", text, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("exit: %v\n%s", err, c.Stderr())
	}
}

// TestAbortRetryOverProcess: during a 5 s retry wait get_state reports
// isRetrying and the attempt; abort_retry, and set_auto_retry false as
// well, is answered and ends the chain with "Retry cancelled" long before
// the wait would have.
func TestAbortRetryOverProcess(t *testing.T) {
	for name, cmd := range map[string]string{
		"abort_retry":          `"type":"abort_retry"`,
		"set_auto_retry false": `"type":"set_auto_retry","enabled":false`,
	} {
		t.Run(name, func(t *testing.T) {
			isolate(t, `{"retry":{"baseDelayMs":5000}}`)
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
			p := startProc(t, fakeArgs(srv)...)

			p.send(`{"id":"p1","type":"prompt","message":"hi"}`)
			if r := p.response("p1"); r["success"] != true {
				t.Fatalf("prompt: %v", r)
			}
			start := p.event(session.AutoRetryStart)
			if start["delayMs"] != 5000.0 || start["attempt"] != 1.0 {
				t.Errorf("auto_retry_start %v", start)
			}
			p.send(`{"id":"s1","type":"get_state"}`)
			st := p.response("s1")["data"].(map[string]any)
			if st["isRetrying"] != true || st["retryAttempt"] != 1.0 || st["isStreaming"] != false || st["messageCount"] != 1.0 || st["autoRetryEnabled"] != true {
				t.Errorf("state during the wait: %v", st)
			}
			sent := time.Now()
			p.send(`{"id":"a1",` + cmd + `}`)
			// The response and the events the command causes come from two
			// goroutines: agent_settled may come before the response (the
			// session settles while the server writes it), so it is watched
			// for here as well, never awaited after the response.
			var end, resp map[string]any
			settled := false
			p.until("the response, auto_retry_end and agent_settled", func(m map[string]any) bool {
				switch {
				case m["type"] == string(session.AutoRetryEnd):
					end = m
				case m["type"] == string(session.AgentSettled):
					if end == nil {
						t.Errorf("agent_settled before auto_retry_end")
					}
					settled = true
				case m["id"] == "a1":
					resp = m
				}
				return end != nil && resp != nil && settled
			})
			if took := time.Since(sent); took > 2*time.Second { // the wait was 5 s
				t.Errorf("the wait ended after %v", took)
			}
			if resp["success"] != true {
				t.Errorf("response: %v", resp)
			}
			if end["success"] != false || end["finalError"] != "Retry cancelled" || end["attempt"] != 1.0 {
				t.Errorf("auto_retry_end %v", end)
			}
			p.send(`{"id":"s2","type":"get_state"}`)
			st = p.response("s2")["data"].(map[string]any)
			if st["isRetrying"] != false || st["retryAttempt"] != 0.0 || st["isStreaming"] != false {
				t.Errorf("state after the wait: %v", st)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model calls, want 1 (the retry was cancelled)", n)
			}
		})
	}
}

// TestSetAutoRetryOverProcess: with auto-retry off a transient failure
// ends the prompt at once.
func TestSetAutoRetryOverProcess(t *testing.T) {
	isolate(t, `{"retry":{"baseDelayMs":5000}}`)
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
	ctx := ctxT(t)
	c, err := Start(ctx, rallyBinary(t), fakeArgs(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := record(c)
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Prompt(ctx, "hi", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if types := strings.Join(rec.types(), " "); strings.Contains(types, "auto_retry") {
		t.Errorf("a retry with auto-retry off: %s", types)
	}
	msgs, _ := c.GetMessages(ctx)
	if len(msgs) != 2 || msgs[1].StopReason != "error" {
		t.Errorf("messages %+v", msgs)
	}
}

// TestClientOverProcess runs every client method against a real rally on
// the sim model.
func TestClientOverProcess(t *testing.T) {
	isolate(t, "")
	ctx := ctxT(t)
	c, err := Start(ctx, rallyBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.GetState(ctx)
	if err != nil || st.Model.Provider != "sim" || st.SessionFile == "" || st.SessionID == "" {
		t.Fatalf("state %+v %v", st, err)
	}
	if err := c.Prompt(ctx, "What does rally do?", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		run  func() error
	}{
		{"get_messages", func() error {
			ms, err := c.GetMessages(ctx)
			if err == nil && len(ms) != 2 {
				err = errors.New("want 2 messages")
			}
			return err
		}},
		{"get_last_assistant_text", func() error {
			text, err := c.GetLastAssistantText(ctx)
			if err == nil && !strings.Contains(text, "rally") {
				err = errors.New("text " + text)
			}
			return err
		}},
		{"get_session_stats", func() error {
			s, err := c.GetSessionStats(ctx)
			if err == nil && (s.TotalMessages != 2 || s.SessionFile != st.SessionFile) {
				err = errors.New("bad stats")
			}
			return err
		}},
		{"get_available_models", func() error {
			ms, err := c.GetAvailableModels(ctx)
			if err == nil && (len(ms) == 0 || ms[0].ID != "sim") {
				err = errors.New("bad models")
			}
			return err
		}},
		{"set_model", func() error { _, err := c.SetModel(ctx, "sim", "sim"); return err }},
		{"set_session_name", func() error { return c.SetSessionName(ctx, "demo") }},
		{"set_auto_compaction", func() error { return c.SetAutoCompaction(ctx, false) }},
		{"set_auto_retry", func() error { return c.SetAutoRetry(ctx, true) }},
		{"steer", func() error { return c.Steer(ctx, "s") }},
		{"follow_up", func() error { return c.FollowUp(ctx, "f") }},
		{"abort_retry", func() error { return c.AbortRetry(ctx) }},
		{"abort", func() error { return c.Abort(ctx) }},
		{"compact", func() error {
			_, err := c.Compact(ctx) // two messages are all recent
			var rerr *Error
			if errors.As(err, &rerr) && strings.Contains(rerr.Message, "nothing to compact") {
				return nil
			}
			return err
		}},
		{"new_session", func() error {
			if _, err := c.NewSession(ctx); err != nil {
				return err
			}
			s, err := c.GetState(ctx)
			if err == nil && (s.MessageCount != 0 || s.SessionFile == st.SessionFile || s.AutoCompactionEnabled) {
				err = errors.New("not a fresh session with the same settings")
			}
			return err
		}},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			if err := ch.run(); err != nil {
				t.Error(err)
			}
		})
	}
	if err := c.Close(); err != nil {
		t.Errorf("exit: %v\n%s", err, c.Stderr())
	}
}

// TestStartContextEndsProcess: cancelling Start's context stops rally
// (SIGTERM), which exits cleanly.
func TestStartContextEndsProcess(t *testing.T) {
	isolate(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Start(ctx, rallyBinary(t), "--no-session")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetState(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("rally still running after its context ended")
	}
	if err := c.Close(); err != nil && !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("exit: %v", err)
	}
	if _, err := c.GetState(ctxT(t)); err == nil {
		t.Error("a call on a closed client succeeded")
	}
}
