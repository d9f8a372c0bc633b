package providertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/retry"
)

// The transport faults every client meets alike: a connection reset, no
// response headers, a body cut short, a stream gone quiet, a cancelled
// context.

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
	if !strings.HasPrefix(err.Error(), c.Name+": send request: ") {
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
	_, err := c.with(s.URL, 50*time.Millisecond, 5*time.Second).Stream(t.Context(), Ask(c.Model, "hi"))
	if !errors.Is(err, httpcall.ErrFirstByteTimeout) || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v, want the first-byte timeout", err, time.Since(start))
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
		"clean end": c.Wire.Stream(head),
		// The server drops the connection mid-body.
		"abort": func(w http.ResponseWriter, r *http.Request) {
			c.Wire.Stream(head)(w, r)
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
		c.Wire.Stream(c.Partial("one"))(w, r)
		<-r.Context().Done() // stall until the client goes away
	})
	start := time.Now()
	m, err, _ := Run(t, c.with(s.URL, 5*time.Second, 50*time.Millisecond), Ask(c.Model, "hi"))
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
		c.Wire.Stream(c.Partial("one"))(w, r)
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
