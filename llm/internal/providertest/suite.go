package providertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
)

// Client is what the shared tests need to know of a client under test. Its
// methods are whole tests: a client's test file calls each from a Test
// function of the same name.
type Client struct {
	// Name starts the client's own errors ("anthropic").
	Name string
	// New makes the client for a fake server's URL, with the request
	// timeout and the idle timeout given.
	New func(url string, timeout, idle time.Duration) llm.Provider
	// Model is the model the tests ask.
	Model llm.Model
	// Events is how the API frames its streams.
	Events Events
	// Partial is a stream, in the API's own shapes, that has sent the text
	// pieces as deltas and has not ended.
	Partial func(pieces ...string) string
}

// Ask is a first attempt at a request of one user message.
func Ask(m llm.Model, text string) *llm.Request {
	return &llm.Request{Model: m, Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(text)}}}, Attempt: 1}
}

func (c *Client) client(url string) llm.Provider { return c.New(url, 5*time.Second, 5*time.Second) }

// ResetBeforeHeaders: a connection reset before any response is a
// transient error of Stream itself.
func (c *Client) ResetBeforeHeaders(t *testing.T) {
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
		conn.Close()
	})
	st, err := c.client(s.URL).Stream(t.Context(), Ask(c.Model, "hi"))
	if st != nil || err == nil {
		t.Fatalf("stream %v err %v", st, err)
	}
	if !strings.HasPrefix(err.Error(), c.Name+": request: ") {
		t.Errorf("error %q", err)
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v (%s): %v", v.Class, v.Reason, err)
	}
}

// FirstByteTimeout: a server that sends no headers within the request
// timeout fails Stream at once, transiently.
func (c *Client) FirstByteTimeout(t *testing.T) {
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	start := time.Now()
	_, err := c.New(s.URL, 50*time.Millisecond, 5*time.Second).Stream(t.Context(), Ask(c.Model, "hi"))
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v: %v", v.Class, err)
	}
}

// Drop: a body that ends, cleanly or not, before the answer does fails the
// stream transiently and keeps the text so far.
func (c *Client) Drop(t *testing.T) {
	head := c.Partial("one", " two")
	for name, h := range map[string]http.HandlerFunc{
		// The server ends the response cleanly without its terminal
		// event: the stream is truncated.
		"clean end": c.Events.Stream(head),
		// The server drops the connection mid-body.
		"abort": func(w http.ResponseWriter, r *http.Request) {
			c.Events.Stream(head)(w, r)
			panic(http.ErrAbortHandler)
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, err, _ := Run(t, c.client(NewServer(t, h).URL), Ask(c.Model, "hi"))
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

// Stall: a stream that goes quiet ends with the idle timeout, soon, and
// lets the server go.
func (c *Client) Stall(t *testing.T) {
	handlerDone := make(chan struct{})
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		c.Events.Stream(c.Partial("one"))(w, r)
		<-r.Context().Done() // stall until the client goes away
	})
	start := time.Now()
	m, err, _ := Run(t, c.New(s.URL, 5*time.Second, 50*time.Millisecond), Ask(c.Model, "hi"))
	if !errors.Is(err, llm.ErrIdleTimeout) || m.StopReason != llm.Error {
		t.Fatalf("stop %q err %v", m.StopReason, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("idle timeout took %v", d)
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("classified %v: %v", v.Class, err)
	}
	if !strings.HasPrefix(err.Error(), c.Name+": read stream: ") {
		t.Errorf("error %q", err)
	}
	select {
	case <-handlerDone:
	case <-time.After(2 * time.Second):
		t.Error("the stalled handler did not see the client go away")
	}
}

// Cancel: cancelling the context aborts the stream within milliseconds,
// keeping the text so far.
func (c *Client) Cancel(t *testing.T) {
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		c.Events.Stream(c.Partial("one"))(w, r)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := c.client(s.URL).Stream(ctx, Ask(c.Model, "hi"))
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

// Fake points a new client at an llmtest server playing script.
func (c *Client) Fake(t *testing.T, script ...llmtest.Step) (llm.Provider, *llmtest.Server) {
	srv := llmtest.NewServer(t, script...)
	return c.New(srv.URL, 5*time.Second, 200*time.Millisecond), srv
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
	// ErrType and ErrCode, if set, are those of the mid-stream
	// *llm.APIError.
	ErrType, ErrCode string
}

// FakeFaults plays each fault and checks the failure, and that the server
// saw the request fail.
func (c *Client) FakeFaults(t *testing.T, faults []Fault) {
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
			e, ok := llm.AsAPIError(err)
			if tt.ErrType != "" && (!ok || e.Type != tt.ErrType || !e.MidStream) {
				t.Errorf("error %#v, want type %q", err, tt.ErrType)
			}
			if tt.ErrCode != "" && (!ok || e.Code != tt.ErrCode || !e.MidStream) {
				t.Errorf("error %#v, want code %q", err, tt.ErrCode)
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
