package anthropic

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

func TestHTTPErrors(t *testing.T) {
	now := time.Now()
	reset := now.Add(42 * time.Second).UTC().Format(time.RFC3339)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		class   retry.Class
		typ     string
		hint    time.Duration // 0: none expected
	}{
		{"529 overloaded", fail(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}`), retry.Transient, "overloaded_error", 0},
		{"429 retry-after", fail(429, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}`, "retry-after", "7"),
			retry.Transient, "rate_limit_error", 7 * time.Second},
		{"429 ratelimit reset", fail(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			"anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", reset), retry.Transient, "rate_limit_error", 42 * time.Second},
		{"500 api_error", fail(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), retry.Transient, "api_error", 0},
		{"401 invalid key", fail(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), retry.Fatal, "authentication_error", 0},
		{"400 bad request", fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`), retry.Fatal, "invalid_request_error", 0},
		{"404 model", fail(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`), retry.Fatal, "not_found_error", 0},
		{"400 prompt too long", fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`), retry.ContextOverflow, "invalid_request_error", 0},
		{"413 request too large", fail(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`), retry.ContextOverflow, "request_too_large", 0},
		{"400 credit balance", fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`), retry.Fatal, "invalid_request_error", 0},
		{"502 html", fail(502, `<html><body>502 Bad Gateway</body></html>`), retry.Transient, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			st, err := client(s).Stream(t.Context(), ask("hi"))
			if st != nil || err == nil {
				t.Fatalf("stream %v err %v", st, err)
			}
			e, ok := llm.AsAPIError(err)
			if !ok || e.Provider != "anthropic" || e.Type != tt.typ || e.MidStream || e.StatusCode == 0 {
				t.Fatalf("error %#v", err)
			}
			if !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Errorf("error %q", err)
			}
			if v := llm.Classify(err); v.Class != tt.class {
				t.Errorf("classified %v (%s), want %v", v.Class, v.Reason, tt.class)
			}
			if got := retry.Hint(retry.FailureOf(err), now); tt.hint != 0 && (got < tt.hint-2*time.Second || got > tt.hint) {
				t.Errorf("hint %v, want about %v", got, tt.hint)
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key")
		fail(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: `+key+`"}}`, "x-echo", "k="+key)(w, r)
	}
	midStream := func(w http.ResponseWriter, r *http.Request) {
		stream(msgStart(1, 0, 0, 1)+ev("error", `{"type":"error","error":{"type":"api_error","message":"key `+r.Header.Get("x-api-key")+` broke"}}`))(w, r)
	}
	for name, h := range map[string]http.HandlerFunc{"http": echo, "stream": midStream} {
		t.Run(name, func(t *testing.T) {
			c := client(newServer(t, h))
			st, err := c.Stream(t.Context(), ask("hi"))
			if err == nil {
				_, err = llm.Collect(st)
			}
			e, ok := llm.AsAPIError(err)
			if !ok {
				t.Fatalf("error %v", err)
			}
			for what, s := range map[string]string{"Error()": err.Error(), "Body": e.Body, "Message": e.Message} {
				if strings.Contains(s, testKey) || strings.Contains(s, "test-secret") {
					t.Errorf("%s holds the key: %q", what, s)
				}
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	s := newServer(t, stream(textBody("ok")))
	c := client(s)
	c.Header = http.Header{"Anthropic-Beta": {"fine-grained-tool-streaming-2025-05-14"}}
	req := ask("hi")
	req.Attempt = 3
	if _, err, _ := run(t, c, req); err != nil {
		t.Fatal(err)
	}
	got := s.last()
	for k, want := range map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"X-Rally-Attempt":   "3",
		"Anthropic-Beta":    "fine-grained-tool-streaming-2025-05-14",
		"Content-Type":      "application/json",
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if got.Path != "/v1/messages" || strings.Contains(got.Path, testKey) {
		t.Errorf("path %q", got.Path)
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ base, model, want string }{
		{"", "", "https://api.anthropic.com/v1/messages"},
		{"", "https://proxy.example/anthropic", "https://proxy.example/anthropic/v1/messages"},
		{"http://127.0.0.1:8080/", "https://api.anthropic.com", "http://127.0.0.1:8080/v1/messages"},
		{"https://gw.example/v1", "", "https://gw.example/v1/messages"},
	}
	for _, tt := range tests {
		c := &Client{BaseURL: tt.base}
		if got := c.url(&llm.Model{BaseURL: tt.model}); got != tt.want {
			t.Errorf("url(%q, %q) = %q, want %q", tt.base, tt.model, got, tt.want)
		}
	}
}

func TestResetBeforeHeaders(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
		conn.Close()
	})
	st, err := client(s).Stream(t.Context(), ask("hi"))
	if st != nil || err == nil {
		t.Fatalf("stream %v err %v", st, err)
	}
	if !strings.HasPrefix(err.Error(), "anthropic: request: ") {
		t.Errorf("error %q", err)
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v (%s): %v", v.Class, v.Reason, err)
	}
}

func TestFirstByteTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := client(s)
	c.Timeout = 50 * time.Millisecond
	start := time.Now()
	_, err := c.Stream(t.Context(), ask("hi"))
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v: %v", v.Class, err)
	}
}

func TestDrop(t *testing.T) {
	head := msgStart(5, 0, 0, 1) + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "one") + textDelta(0, " two")
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		// The server ends the response cleanly after K events: no
		// message_stop, so the stream is truncated.
		{"clean end", stream(head)},
		// The server drops the connection mid-body.
		{"abort", func(w http.ResponseWriter, r *http.Request) {
			stream(head)(w, r)
			panic(http.ErrAbortHandler)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err, _ := run(t, client(newServer(t, tt.handler)), ask("hi"))
			if m.StopReason != llm.Error || err == nil {
				t.Fatalf("stop %q err %v", m.StopReason, err)
			}
			if m.TextOf() != "one two" {
				t.Errorf("partial text %q", m.TextOf())
			}
			if v := llm.Classify(err); v.Class != retry.Transient {
				t.Errorf("classified %v (%s): %v", v.Class, v.Reason, err)
			}
		})
	}
}

func TestStall(t *testing.T) {
	handlerDone := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		stream(msgStart(5, 0, 0, 1)+blockStart(0, `{"type":"text","text":""}`)+textDelta(0, "one"))(w, r)
		<-r.Context().Done() // stall until the client goes away
	})
	c := client(s)
	c.IdleTimeout = 50 * time.Millisecond
	start := time.Now()
	m, err, _ := run(t, c, ask("hi"))
	if !errors.Is(err, llm.ErrIdleTimeout) || m.StopReason != llm.Error {
		t.Fatalf("stop %q err %v", m.StopReason, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("idle timeout took %v", d)
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v: %v", v.Class, err)
	}
	if !strings.HasPrefix(err.Error(), "anthropic: read stream: ") {
		t.Errorf("error %q", err)
	}
	select {
	case <-handlerDone:
	case <-time.After(2 * time.Second):
		t.Error("the stalled handler did not see the client go away")
	}
}

func TestCancel(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(msgStart(5, 0, 0, 1)+blockStart(0, `{"type":"text","text":""}`)+textDelta(0, "one"))(w, r)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := client(s).Stream(ctx, ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var at time.Time
	for {
		e, err := st.Next()
		if err != nil {
			t.Fatalf("stream ended without an error event: %v", err)
		}
		if e.Type == llm.EventTextDelta {
			at = time.Now()
			cancel()
		}
		if e.Type == llm.EventError {
			if e.Reason != llm.Aborted || !errors.Is(e.Err, context.Canceled) {
				t.Errorf("reason %q err %v", e.Reason, e.Err)
			}
			break
		}
	}
	if d := time.Since(at); d > 200*time.Millisecond {
		t.Errorf("abort took %v", d)
	}
	if m := st.Message(); m.StopReason != llm.Aborted || m.TextOf() != "one" {
		t.Errorf("stop %q text %q", m.StopReason, m.TextOf())
	}
}
