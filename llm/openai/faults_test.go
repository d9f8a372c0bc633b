package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/retry"
)

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		class  string
		hint   time.Duration
	}{
		{"429 with retry-after", 429, map[string]string{"Retry-After": "7"},
			`{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			"transient", 7 * time.Second},
		{"401 echoing the key", 401, nil,
			`{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"fatal", 0},
		{"400 context_length_exceeded", 400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			"context_overflow", 0},
		{"503 overloaded", 503, nil, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error"}}`, "transient", 0},
		{"404 unknown model", 404, nil, `{"error":{"message":"The model 'x' does not exist","type":"invalid_request_error","code":"model_not_found"}}`, "fatal", 0},
		{"key echoed in a header", 400, map[string]string{"X-Debug": "auth=Bearer " + testKey}, `{"error":{"message":"bad request"}}`, "fatal", 0},
	}
	for _, c := range clients {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.status)
					io.WriteString(w, tt.body)
				}))
				defer srv.Close()
				_, err := c.new(srv.URL).Stream(context.Background(), request(testModel))
				ae, ok := llm.AsAPIError(err)
				if !ok {
					t.Fatalf("error %v (%T), want *llm.APIError", err, err)
				}
				if ae.StatusCode != tt.status || ae.Provider != "testprov" || ae.MidStream {
					t.Errorf("APIError %+v", ae)
				}
				if got := classOf(err); got != tt.class {
					t.Errorf("class %s, want %s (%s)", got, tt.class, llm.Classify(err).Reason)
				}
				if got := retry.Hint(retry.FailureOf(err), time.Now()); got != tt.hint {
					t.Errorf("hint %v, want %v", got, tt.hint)
				}
				keyFree(t, err)
			})
		}
	}
}

// TestKeyInStreamError has the server echo the key inside a 200 stream.
func TestKeyInStreamError(t *testing.T) {
	bodies := map[string]string{
		"completions": chatStream(`{"error":{"message":"bad key ` + testKey + `","type":"invalid_request_error"}}`),
		"responses":   respStream(`{"type":"error","code":"invalid_api_key","message":"bad key ` + testKey + `"}`),
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			msg, err := run(t, c.new(serveBytes(t, []byte(bodies[c.name])).URL), request(testModel))
			if err == nil {
				t.Fatal("no error")
			}
			keyFree(t, err)
			if ae, ok := llm.AsAPIError(err); !ok || !ae.MidStream {
				t.Errorf("error %#v, want a mid-stream *llm.APIError", err)
			}
			if e := msg.ErrorMessage; e == "" || strings.Contains(e, "SECRET") {
				t.Errorf("message error %q", e)
			}
		})
	}
}

func TestStreamFaults(t *testing.T) {
	tests := []struct {
		name  string
		after string
		check func(t *testing.T, msg *llm.Message, err error)
	}{
		{"complete", "end", func(t *testing.T, msg *llm.Message, err error) {
			if err != nil || msg.StopReason != llm.Stop || msg.TextOf() != "part0 part1 part2 " {
				t.Errorf("stop %q text %q err %v", msg.StopReason, msg.TextOf(), err)
			}
		}},
		{"clean close without terminal event", "close", func(t *testing.T, msg *llm.Message, err error) {
			if !errors.Is(err, llm.ErrTruncated) || classOf(err) != "transient" {
				t.Errorf("error %v (%s), want truncated, transient", err, classOf(err))
			}
			if msg.StopReason != llm.Error || msg.TextOf() != "part0 part1 part2 " {
				t.Errorf("stop %q text %q", msg.StopReason, msg.TextOf())
			}
		}},
		{"connection cut", "cut", func(t *testing.T, msg *llm.Message, err error) {
			if err == nil || classOf(err) != "transient" {
				t.Errorf("error %v (%s), want transient", err, classOf(err))
			}
			if msg.StopReason != llm.Error || msg.TextOf() != "part0 part1 part2 " {
				t.Errorf("stop %q text %q", msg.StopReason, msg.TextOf())
			}
		}},
	}
	for _, c := range clients {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				srv := httptest.NewServer(&faultServer{api: c.name, n: 3, after: tt.after})
				defer srv.Close()
				msg, err := run(t, c.new(srv.URL), request(testModel))
				if msg == nil {
					t.Fatalf("no stream: %v", err)
				}
				tt.check(t, msg, err)
			})
		}
	}
}

func TestIdleTimeout(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := &faultServer{api: c.name, n: 2, after: "stall", stalled: make(chan struct{}), left: make(chan struct{})}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := withTimeouts(c.new(srv.URL), time.Second, 50*time.Millisecond)
			start := time.Now()
			msg, err := run(t, p, request(testModel))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			if !errors.Is(err, llm.ErrIdleTimeout) || classOf(err) != "transient" {
				t.Errorf("error %v (%s), want idle timeout, transient", err, classOf(err))
			}
			if msg.StopReason != llm.Error || msg.TextOf() != "part0 part1 " {
				t.Errorf("stop %q text %q", msg.StopReason, msg.TextOf())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			select {
			case <-f.left:
			case <-time.After(2 * time.Second):
				t.Error("the stalled handler never saw the client go away")
			}
		})
	}
}

func TestFirstByteTimeout(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The server notices the client leaving only once the body is read.
				io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}))
			defer srv.Close()
			start := time.Now()
			_, err := withTimeouts(c.new(srv.URL), 50*time.Millisecond, time.Second).Stream(context.Background(), request(testModel))
			if !errors.Is(err, httpcall.ErrFirstByteTimeout) || classOf(err) != "transient" {
				t.Errorf("error %v (%s), want first-byte timeout, transient", err, classOf(err))
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestResetBeforeHeaders(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) // close with a RST
				}
				conn.Close()
			}))
			defer srv.Close()
			s, err := c.new(srv.URL).Stream(context.Background(), request(testModel))
			if s != nil || err == nil {
				t.Fatalf("stream %v err %v, want an error before the stream", s, err)
			}
			if classOf(err) != "transient" {
				t.Errorf("error %v classified %s (%s)", err, classOf(err), llm.Classify(err).Reason)
			}
			keyFree(t, err)
		})
	}
}

func TestCancel(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := &faultServer{api: c.name, n: 1, after: "stall", stalled: make(chan struct{}), left: make(chan struct{})}
			srv := httptest.NewServer(f)
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := c.new(srv.URL).Stream(ctx, request(testModel))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for {
				e, err := s.Next()
				if err != nil {
					t.Fatalf("stream ended early: %v", err)
				}
				if e.Type == llm.EventTextDelta {
					break
				}
			}
			<-f.stalled
			start := time.Now()
			time.AfterFunc(10*time.Millisecond, cancel)
			var last llm.Event
			for {
				e, err := s.Next()
				if err == io.EOF {
					break
				}
				last = e
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("abort took %v", d)
			}
			if last.Type != llm.EventError || last.Reason != llm.Aborted || s.Message().StopReason != llm.Aborted {
				t.Errorf("last event %v %v, message stop %q", last.Type, last.Reason, s.Message().StopReason)
			}
			if !errors.Is(last.Err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", last.Err)
			}
			if s.Message().TextOf() != "part0 " {
				t.Errorf("text %q", s.Message().TextOf())
			}
		})
	}
}

func TestAttemptHeader(t *testing.T) {
	for _, c := range clients {
		for _, attempt := range []int{0, 1, 4} {
			reply := chatStream(finishChunk("stop"), "[DONE]")
			if c.name == "responses" {
				reply = respStream(respCompleted)
			}
			srv, got := captureServer(t, reply)
			req := request(testModel)
			req.Attempt = attempt
			if _, err := run(t, c.new(srv.URL), req); err != nil {
				t.Fatal(err)
			}
			want := ""
			if attempt > 0 {
				want = string(rune('0' + attempt))
			}
			if h := got.header.Get("x-rally-attempt"); h != want {
				t.Errorf("%s attempt %d: header %q, want %q", c.name, attempt, h, want)
			}
		}
	}
}

// withTimeouts sets a client's request and idle timeouts.
func withTimeouts(p llm.Provider, timeout, idle time.Duration) llm.Provider {
	switch c := p.(type) {
	case *Completions:
		c.Timeout, c.IdleTimeout = timeout, idle
	case *Responses:
		c.Timeout, c.IdleTimeout = timeout, idle
	}
	return p
}

// TestBrokenAfterFinish: once the finish_reason is in, a body that breaks
// or goes idle before [DONE] still yields the whole answer.
func TestBrokenAfterFinish(t *testing.T) {
	for _, mode := range []string{"cut", "stall"} {
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chatStream(textChunk("whole answer"), finishChunk("stop")))
				w.(http.Flusher).Flush()
				if mode == "cut" {
					if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
				<-r.Context().Done()
			}))
			defer srv.Close()
			msg, err := run(t, &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL, IdleTimeout: 50 * time.Millisecond}}, request(testModel))
			if err != nil || msg.StopReason != llm.Stop || msg.TextOf() != "whole answer" {
				t.Errorf("stop %q text %q err %v", msg.StopReason, msg.TextOf(), err)
			}
		})
	}
}
