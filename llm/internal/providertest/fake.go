package providertest

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
)

// The scripts of the llmtest fake server every client plays alike.

// Fake points a new client at an llmtest server playing script.
func (c *Client) Fake(t *testing.T, script ...llmtest.Step) (llm.Provider, *llmtest.Server) {
	srv := llmtest.NewServer(t, script...)
	return c.with(srv.URL, 5*time.Second, 200*time.Millisecond), srv
}

// FakeReply plays an answer with thinking, text and two tool calls, one of
// them in pieces, with usage, and checks the message and what the server
// saw of the request. It returns the message for the client's own checks.
func (c *Client) FakeReply(t *testing.T, usage llmtest.Usage) *llm.Message {
	p, srv := c.Fake(t, llmtest.Step{
		Thinking:  "Two files to read.",
		Text:      "Reading them now.",
		ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}, {Name: "bash", Arguments: `{"command":"ls -la"}`, Chunks: 5}},
		Usage:     &usage,
	})
	m, err, _ := Run(t, p, Ask(c.Model, "go"))
	if err != nil {
		t.Fatal(err)
	}
	if m.TextOf() != "Reading them now." || m.StopReason != llm.ToolUse || m.Content[0].Thinking != "Two files to read." {
		t.Errorf("message %+v", m)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "read" || !SameJSON(string(calls[1].Arguments), `{"command":"ls -la"}`) || calls[0].ID == calls[1].ID {
		t.Errorf("calls %+v", calls)
	}
	if u := m.Usage; u == nil || u.Input != usage.Input || u.Output != usage.Output || u.CacheRead != usage.CacheRead || u.CacheWrite != usage.CacheWrite {
		t.Errorf("usage %+v, want %+v", m.Usage, usage)
	}
	r := srv.Requests()[0]
	if r.Attempt != "1" || r.Model != c.Model.ID || strings.Contains(r.Credential, "secret") || string(r.API) != c.API || r.AuthHeader == "" {
		t.Errorf("recorded request %+v", r)
	}
	return m
}

// FakeHTTPErrors: every HTTP error llmtest can script comes back from
// Stream as an *llm.APIError of its class, with the server's retry hint.
func (c *Client) FakeHTTPErrors(t *testing.T) {
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
			p, _ := c.Fake(t, llmtest.Step{Fault: llmtest.HTTPError, Error: tt.kind})
			_, err := p.Stream(t.Context(), Ask(c.Model, "hi"))
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

// Fault is a fault llmtest scripts, and how the client must fail on it:
// always transiently.
type Fault struct {
	Name   string
	Step   llmtest.Step
	InOpen bool  // Stream itself fails
	ErrIs  error // if set, the error wraps it
	// Err, if set, is the type or code of the mid-stream *llm.APIError.
	Err ErrorKind
}

// ErrorKind is what tells an *llm.APIError's kind apart: its Type for
// Anthropic ("overloaded_error"), its Code for Gemini ("UNAVAILABLE").
type ErrorKind struct{ Type, Code string }

// FakeFaults plays the faults every client meets alike, and more of the
// client's own, and checks each failure, and that the server saw the
// request fail. An overloaded error event must fail with overloaded.
func (c *Client) FakeFaults(t *testing.T, overloaded ErrorKind, more ...Fault) {
	const text = "one two three four five"
	faults := append([]Fault{
		{Name: "reset", Step: llmtest.Step{Fault: llmtest.Reset}, InOpen: true},
		{Name: "drop", Step: llmtest.Step{Fault: llmtest.Drop, After: 2, Text: text}},
		{Name: "stall", Step: llmtest.Step{Fault: llmtest.Stall, After: 2, Text: text}, ErrIs: llm.ErrIdleTimeout},
		{Name: "error event", Step: llmtest.Step{Fault: llmtest.ErrorEvent, After: 2, Text: text}, Err: overloaded},
		{Name: "error event at once", Step: llmtest.Step{Fault: llmtest.ErrorEvent}, Err: overloaded},
	}, more...)
	for _, tt := range faults {
		t.Run(tt.Name, func(t *testing.T) {
			p, srv := c.Fake(t, tt.Step)
			st, err := p.Stream(t.Context(), Ask(c.Model, "hi"))
			if tt.InOpen {
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
			if tt.ErrIs != nil && !errors.Is(err, tt.ErrIs) {
				t.Errorf("error %v is not %v", err, tt.ErrIs)
			}
			if tt.Err != (ErrorKind{}) {
				e, ok := llm.AsAPIError(err)
				if !ok || !e.MidStream || tt.Err.Type != "" && e.Type != tt.Err.Type || tt.Err.Code != "" && e.Code != tt.Err.Code {
					t.Errorf("error %#v, want a mid-stream %+v", err, tt.Err)
				}
			}
			if o := srv.Requests()[0].Outcome; o == "ok" {
				t.Errorf("server outcome %q", o)
			}
		})
	}
}

// FakePresets plays each llmtest preset as the session would: attempts
// until one succeeds, each attempt numbered.
func (c *Client) FakePresets(t *testing.T) {
	for _, name := range llmtest.Presets() {
		t.Run(name, func(t *testing.T) {
			script, err := llmtest.Preset(name)
			if err != nil {
				t.Fatal(err)
			}
			p, srv := c.Fake(t, script...)
			// The server's clock moves an hour after each failed attempt,
			// as the session's wait would: a preset whose limit lifts at
			// a stated reset (usage-reset) lifts on the next attempt.
			var mu sync.Mutex
			clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			srv.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			var m *llm.Message
			for attempt := 1; attempt <= len(script); attempt++ {
				req := Ask(c.Model, "hi")
				req.Attempt = attempt
				st, err := p.Stream(t.Context(), req)
				if err == nil {
					m, err = llm.Collect(st)
				}
				if err == nil {
					break
				}
				if attempt == len(script) {
					t.Fatalf("attempt %d: %v", attempt, err)
				}
				mu.Lock()
				clock = clock.Add(time.Hour)
				mu.Unlock()
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
