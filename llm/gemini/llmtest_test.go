package gemini

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/llmtest"
)

func TestFakeReply(t *testing.T) {
	c, srv := tested.Fake(t, llmtest.Step{
		Thinking:  "Two files to read.",
		Text:      "Reading them now.",
		ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}, {Name: "bash", Arguments: `{"command":"ls -la"}`, Chunks: 5}},
		Usage:     &llmtest.Usage{Input: 120, Output: 40, CacheRead: 1000},
	})
	m, err, _ := providertest.Run(t, c, ask("go"))
	if err != nil {
		t.Fatal(err)
	}
	if m.TextOf() != "Reading them now." || m.StopReason != llm.ToolUse || m.Content[0].Thinking != "Two files to read." {
		t.Errorf("message %+v", m)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "read" || !providertest.SameJSON(string(calls[1].Arguments), `{"command":"ls -la"}`) || calls[0].ID == calls[1].ID {
		t.Errorf("calls %+v", calls)
	}
	if u := m.Usage; u == nil || u.Input != 120 || u.Output != 40 || u.CacheRead != 1000 {
		t.Errorf("usage %+v", m.Usage)
	}
	r := srv.Requests()[0]
	if r.Attempt != "1" || r.Model != "gemini-2.5-flash" || strings.Contains(r.Credential, "secret") || r.API != llmtest.GoogleGenerativeAI || r.AuthHeader == "" {
		t.Errorf("recorded request %+v", r)
	}
}

// The llmtest scripts every client plays alike.
func TestFakeHTTPErrors(t *testing.T) { tested.FakeHTTPErrors(t) }
func TestFakePresets(t *testing.T)    { tested.FakePresets(t) }

func TestFakeFaults(t *testing.T) {
	tested.FakeFaults(t, []providertest.Fault{
		{Name: "reset", Step: llmtest.Step{Fault: llmtest.Reset}, InOpen: true},
		{Name: "drop", Step: llmtest.Step{Fault: llmtest.Drop, After: 2, Text: "one two three four five"}},
		{Name: "stall", Step: llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "one two three four five"}, ErrIs: llm.ErrIdleTimeout},
		{Name: "error event", Step: llmtest.Step{Fault: llmtest.ErrorEvent, After: 2, Text: "one two three four five"}, ErrCode: "UNAVAILABLE"},
		{Name: "error event at once", Step: llmtest.Step{Fault: llmtest.ErrorEvent}, ErrCode: "UNAVAILABLE"},
		{Name: "rate limit event", Step: llmtest.Step{Fault: llmtest.ErrorEvent, Error: llmtest.RateLimited, After: 1}, ErrCode: "RESOURCE_EXHAUSTED"},
	})
}
