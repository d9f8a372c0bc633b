package anthropic

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
)

// fake points a client at an llmtest server playing script.
func fake(t *testing.T, script ...llmtest.Step) (*Client, *llmtest.Server) {
	srv := llmtest.NewServer(t, script...)
	return &Client{BaseURL: srv.URL, APIKey: testKey, Timeout: 5 * time.Second, IdleTimeout: 200 * time.Millisecond}, srv
}

func TestFakeReply(t *testing.T) {
	c, srv := fake(t, llmtest.Step{
		Thinking:  "Two files to read.",
		Text:      "Reading them now.",
		ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}, {Name: "bash", Arguments: `{"command":"ls -la"}`, Chunks: 5}},
		Usage:     &llmtest.Usage{Input: 120, Output: 40, CacheRead: 1000, CacheWrite: 20},
	})
	m, err, _ := run(t, c, ask("go"))
	if err != nil {
		t.Fatal(err)
	}
	if m.TextOf() != "Reading them now." || m.StopReason != llm.ToolUse || m.Content[0].Thinking != "Two files to read." || m.Content[0].ThinkingSignature == "" {
		t.Errorf("message %+v", m)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "read" || !sameJSON(string(calls[1].Arguments), `{"command":"ls -la"}`) || calls[0].ID == calls[1].ID {
		t.Errorf("calls %+v", calls)
	}
	if u := m.Usage; u == nil || u.Input != 120 || u.Output != 40 || u.CacheRead != 1000 || u.CacheWrite != 20 {
		t.Errorf("usage %+v", m.Usage)
	}
	r := srv.Requests()[0]
	if r.Attempt != "1" || r.Model != "claude-sonnet-4-5" || strings.Contains(r.Credential, "secret") || r.API != llmtest.AnthropicMessages {
		t.Errorf("recorded request %+v", r)
	}
}

func TestFakeHTTPErrors(t *testing.T) {
	tests := []struct {
		kind  llmtest.ErrorKind
		class retry.Class
		hint  time.Duration // at least this; 0: any
	}{
		{llmtest.Overloaded, retry.Transient, 0},
		{llmtest.RateLimited, retry.Transient, 500 * time.Millisecond},
		{llmtest.UsageLimit, retry.UsageLimit, 4 * time.Minute},
		{llmtest.Overflow, retry.ContextOverflow, 0},
		{llmtest.Auth, retry.Fatal, 0},
		{llmtest.BadRequest, retry.Fatal, 0},
		{llmtest.NotFound, retry.Fatal, 0},
		{llmtest.ServerError, retry.Transient, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			c, _ := fake(t, llmtest.Step{Fault: llmtest.HTTPError, Error: tt.kind})
			_, err := c.Stream(t.Context(), ask("hi"))
			if _, ok := llm.AsAPIError(err); !ok {
				t.Fatalf("error %v", err)
			}
			if v := llm.Classify(err); v.Class != tt.class {
				t.Errorf("classified %v (%s), want %v: %v", v.Class, v.Reason, tt.class, err)
			}
			if h := retry.Hint(retry.FailureOf(err), time.Now()); h < tt.hint {
				t.Errorf("hint %v, want at least %v", h, tt.hint)
			}
		})
	}
}

func TestFakeFaults(t *testing.T) {
	tests := []struct {
		name    string
		step    llmtest.Step
		inOpen  bool // Stream itself fails
		errIs   error
		errType string
	}{
		{"reset", llmtest.Step{Fault: llmtest.Reset}, true, nil, ""},
		{"drop", llmtest.Step{Fault: llmtest.Drop, After: 2, Text: "one two three four five"}, false, nil, ""},
		{"stall", llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "one two three four five"}, false, llm.ErrIdleTimeout, ""},
		{"error event", llmtest.Step{Fault: llmtest.ErrorEvent, After: 2, Text: "one two three four five"}, false, nil, "overloaded_error"},
		{"error event at once", llmtest.Step{Fault: llmtest.ErrorEvent}, false, nil, "overloaded_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := fake(t, tt.step)
			st, err := c.Stream(t.Context(), ask("hi"))
			if tt.inOpen {
				if err == nil {
					t.Fatal("no error")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				var m *llm.Message
				m, err = llm.Collect(st)
				if m.StopReason != llm.Error || err == nil {
					t.Fatalf("stop %q err %v", m.StopReason, err)
				}
			}
			if v := llm.Classify(err); v.Class != retry.Transient {
				t.Errorf("classified %v (%s): %v", v.Class, v.Reason, err)
			}
			if tt.errIs != nil && !errors.Is(err, tt.errIs) {
				t.Errorf("error %v is not %v", err, tt.errIs)
			}
			if e, ok := llm.AsAPIError(err); tt.errType != "" && (!ok || e.Type != tt.errType || !e.MidStream) {
				t.Errorf("error %#v", err)
			}
			if o := srv.Requests()[0].Outcome; o == "ok" {
				t.Errorf("server outcome %q", o)
			}
		})
	}
}

// TestFakePresets plays each preset as the session would: attempts until
// one succeeds, each attempt numbered.
func TestFakePresets(t *testing.T) {
	for _, name := range llmtest.Presets() {
		t.Run(name, func(t *testing.T) {
			script, err := llmtest.Preset(name)
			if err != nil {
				t.Fatal(err)
			}
			c, srv := fake(t, script...)
			var m *llm.Message
			for attempt := 1; attempt <= len(script); attempt++ {
				req := ask("hi")
				req.Attempt = attempt
				st, err := c.Stream(t.Context(), req)
				if err == nil {
					m, err = llm.Collect(st)
				}
				if err == nil {
					break
				}
				if attempt == len(script) {
					t.Fatalf("attempt %d: %v", attempt, err)
				}
			}
			if m == nil || m.StopReason != llm.Stop || m.TextOf() == "" {
				t.Fatalf("final message %+v", m)
			}
			for i, r := range srv.Requests() {
				if r.Attempt != strconv.Itoa(i+1) {
					t.Errorf("request %d sent attempt %q", i, r.Attempt)
				}
			}
		})
	}
}
