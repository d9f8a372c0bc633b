package openai

import (
	"errors"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
)

// TestAgainstLLMTest runs both clients against the shared fake server for
// every fault it can script.
func TestAgainstLLMTest(t *testing.T) {
	const text = "The quick brown fox jumps over the lazy dog"
	tests := []struct {
		name  string
		step  llmtest.Step
		check func(t *testing.T, msg *llm.Message, err error)
	}{
		{"text with usage", llmtest.Step{Text: text, Usage: &llmtest.Usage{Input: 30, Output: 9, CacheRead: 10}},
			func(t *testing.T, msg *llm.Message, err error) {
				if err != nil || msg.TextOf() != text || msg.StopReason != llm.Stop {
					t.Fatalf("text %q stop %q err %v", msg.TextOf(), msg.StopReason, err)
				}
				if u := msg.Usage; u == nil || u.Input != 30 || u.Output != 9 || u.CacheRead != 10 || u.TotalTokens != 49 {
					t.Errorf("usage %+v", u)
				}
			}},
		{"thinking and tool calls", llmtest.Step{Thinking: "let me see", Text: "Reading.", ToolCalls: []llmtest.ToolCall{
			{ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`}, {ID: "call_2", Name: "bash", Arguments: `{"command":"ls -l"}`, Chunks: 5}}},
			func(t *testing.T, msg *llm.Message, err error) {
				if msg.Usage == nil {
					t.Fatal("no usage")
				}
				u := *msg.Usage
				u.Cost = llm.Cost{}
				check(t, msg, err, want{thinking: "let me see", text: "Reading.", stop: llm.ToolUse, usage: &u,
					calls: []wantCall{{"call_1", "read", `{"path":"a.txt"}`}, {"call_2", "bash", `{"command":"ls -l"}`}}})
			}},
		{"length", llmtest.Step{Text: "cut short", Stop: "length"},
			func(t *testing.T, msg *llm.Message, err error) {
				if err != nil || msg.StopReason != llm.Length {
					t.Errorf("stop %q err %v", msg.StopReason, err)
				}
			}},
		{"drop", llmtest.Step{Fault: llmtest.Drop, After: 3, Text: text},
			func(t *testing.T, msg *llm.Message, err error) {
				if err == nil || classOf(err) != "transient" || msg.StopReason != llm.Error {
					t.Errorf("err %v (%s) stop %q", err, classOf(err), msg.StopReason)
				}
				if msg.TextOf() == "" || msg.TextOf() == text {
					t.Errorf("text %q, want a part", msg.TextOf())
				}
			}},
		{"stall", llmtest.Step{Fault: llmtest.Stall, After: 2, Text: text},
			func(t *testing.T, msg *llm.Message, err error) {
				if !errors.Is(err, llm.ErrIdleTimeout) || classOf(err) != "transient" {
					t.Errorf("err %v (%s), want idle timeout", err, classOf(err))
				}
			}},
		{"error event", llmtest.Step{Fault: llmtest.ErrorEvent, After: 2, Text: text},
			func(t *testing.T, msg *llm.Message, err error) {
				ae, ok := llm.AsAPIError(err)
				if !ok || !ae.MidStream || classOf(err) != "transient" {
					t.Errorf("err %#v (%s), want a transient mid-stream APIError", err, classOf(err))
				}
				keyFree(t, err)
			}},
		{"error event rate limited", llmtest.Step{Fault: llmtest.ErrorEvent, Error: llmtest.RateLimited, Text: text},
			func(t *testing.T, msg *llm.Message, err error) {
				if classOf(err) != "transient" {
					t.Errorf("err %v (%s)", err, classOf(err))
				}
			}},
	}
	httpErrors := []struct {
		kind  llmtest.ErrorKind
		class string
	}{
		{llmtest.Overloaded, "transient"},
		{llmtest.RateLimited, "transient"},
		{llmtest.UsageLimit, "usage_limit"},
		{llmtest.Overflow, "context_overflow"},
		{llmtest.Auth, "fatal"},
		{llmtest.BadRequest, "fatal"},
		{llmtest.NotFound, "fatal"},
		{llmtest.ServerError, "transient"},
	}
	for _, c := range clients {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.NewServer(t, tt.step)
				p := withTimeouts(c.new(srv.URL+"/v1"), 2*time.Second, 100*time.Millisecond)
				msg, err := run(t, p, request(testModel))
				if msg == nil {
					t.Fatalf("no stream: %v", err)
				}
				tt.check(t, msg, err)
				reqs := srv.Requests()
				if len(reqs) != 1 || reqs[0].Attempt != "1" {
					t.Errorf("requests %+v", reqs)
				}
			})
		}
		for _, he := range httpErrors {
			t.Run(c.name+"/http "+string(he.kind), func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: he.kind})
				_, err := run(t, c.new(srv.URL+"/v1"), request(testModel))
				if _, ok := llm.AsAPIError(err); !ok {
					t.Fatalf("err %v, want *llm.APIError", err)
				}
				if got := classOf(err); got != he.class {
					t.Errorf("class %s, want %s (%s): %v", got, he.class, llm.Classify(err).Reason, err)
				}
				if he.kind == llmtest.RateLimited && retry.Hint(retry.FailureOf(err), time.Now()) <= 0 {
					t.Errorf("no retry hint in %v", err)
				}
				keyFree(t, err)
			})
		}
		t.Run(c.name+"/reset", func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Reset})
			_, err := run(t, c.new(srv.URL+"/v1"), request(testModel))
			if err == nil || classOf(err) != "transient" {
				t.Errorf("err %v (%s), want transient", err, classOf(err))
			}
		})
	}
}
