package llmtest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

func TestResetBeforeHeaders(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s, done := started(t, llmtest.Step{Fault: llmtest.Reset})
			resp, err := post(context.Background(), t, s.URL, api, nil)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got a response (%d), want a reset", resp.StatusCode)
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("error %v, want ECONNRESET", err)
			}
			if got := outcomes(t, done, 1); got[0] != "reset" {
				t.Errorf("outcome %q", got[0])
			}
		})
	}
}

func TestDropAfterK(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s, done := started(t, llmtest.Step{Fault: llmtest.Drop, After: 2, Text: "one two three four five"})
			resp := mustPost(t, s.URL, api)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			evs, err := readAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("stream ended with %v, want an unexpected EOF", err)
			}
			r := assemble(t, api, evs)
			if r.text != "one two" || r.terminal || r.stop != "" {
				t.Errorf("got text %q terminal %v stop %q", r.text, r.terminal, r.stop)
			}
			if got := outcomes(t, done, 1); got[0] != "drop after 2" {
				t.Errorf("outcome %q", got[0])
			}
		})
	}
}

// TestDropAfterZero sends the opening events only.
func TestDropAfterZero(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.Drop})
	evs, err := readAll(mustPost(t, s.URL, llmtest.AnthropicMessages).Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(evs) != 3 || evs[0].name != "message_start" || evs[2].name != "ping" {
		t.Errorf("err %v, events %v", err, evs)
	}
}

func TestStallEndsWhenClientLeaves(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s, done := started(t, llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "one two three four"})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp, err := post(ctx, t, s.URL, api, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// Read until the two chunks are in, as a client would.
			sr := newSSE(resp.Body)
			var evs []event
			for assemble(t, api, evs).deltas < 2 {
				ev, err := sr.next()
				if err != nil {
					t.Fatalf("read: %v after %v", err, evs)
				}
				evs = append(evs, ev)
			}
			if r := s.Requests()[0]; r.Outcome != "stall after 2" || r.DurationMs != 0 {
				t.Errorf("while stalled: outcome %q, duration %d", r.Outcome, r.DurationMs)
			}
			// The client gives up (an idle timeout); the handler must
			// return and record the stall.
			cancel()
			if got := outcomes(t, done, 1); got[0] != "stall after 2" {
				t.Errorf("outcome %q", got[0])
			}
		})
	}
}

func TestCloseEndsStall(t *testing.T) {
	s, done := started(t, llmtest.Step{Fault: llmtest.Stall, After: 1})
	resp := mustPost(t, s.URL, llmtest.OpenAICompletions)
	sr := newSSE(resp.Body)
	for range 2 { // the role chunk and one text chunk
		if _, err := sr.next(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if _, err := readAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("after Close the stream ended with %v, want an unexpected EOF", err)
	}
	outcomes(t, done, 1)
}

func TestDelayEndsWhenClientLeaves(t *testing.T) {
	s, done := started(t, llmtest.Step{Text: "one two three", Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(ctx, t, s.URL, llmtest.AnthropicMessages, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := newSSE(resp.Body).next(); err != nil { // message_start
		t.Fatal(err)
	}
	cancel()
	if got := outcomes(t, done, 1); got[0] != "client gone after 0" {
		t.Errorf("outcome %q", got[0])
	}
}

func TestErrorEventInStream(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s, done := started(t, llmtest.Step{Fault: llmtest.ErrorEvent, After: 2, Text: "one two three"})
			resp := mustPost(t, s.URL, api)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			evs, err := readAll(resp.Body)
			if err != nil {
				t.Fatalf("the stream should end cleanly after the error event: %v", err)
			}
			r := assemble(t, api, evs)
			if r.text != "one two" || r.errType != formats[api].streamError || r.terminal {
				t.Errorf("text %q error %q terminal %v", r.text, r.errType, r.terminal)
			}
			if end := formats[api].errorEnd; end != nil {
				end(t, evs)
			}
			if got := outcomes(t, done, 1); got[0] != "error event after 2" {
				t.Errorf("outcome %q", got[0])
			}
		})
	}
}

func TestErrorEventKindAndBody(t *testing.T) {
	s := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.ErrorEvent, Error: llmtest.RateLimited},
		llmtest.Step{Fault: llmtest.ErrorEvent, Body: `{"type":"error","error":{"type":"api_error","message":"Overloaded"}}`},
	)
	evs, _ := readAll(mustPost(t, s.URL, llmtest.AnthropicMessages).Body)
	if r := assemble(t, llmtest.AnthropicMessages, evs); r.errType != "rate_limit_error" {
		t.Errorf("kind: %q", r.errType)
	}
	evs, _ = readAll(mustPost(t, s.URL, llmtest.AnthropicMessages).Body)
	if r := assemble(t, llmtest.AnthropicMessages, evs); r.errType != "api_error" {
		t.Errorf("body: %q", r.errType)
	}
}

// Over HTTP/2 a connection cannot be hijacked; faults reset the stream.
func TestFaultsOverHTTP2(t *testing.T) {
	s := llmtest.New(llmtest.Step{Fault: llmtest.Reset}, llmtest.Step{Fault: llmtest.Drop, After: 1})
	hs := httptest.NewUnstartedServer(s)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() { s.Close(); hs.Close() })
	client := hs.Client()
	do := func() (*http.Response, error) {
		req, _ := http.NewRequest("POST", hs.URL+pathFor(llmtest.OpenAICompletions), strings.NewReader(bodyFor(llmtest.OpenAICompletions)))
		return client.Do(req)
	}
	if resp, err := do(); err == nil {
		resp.Body.Close()
		t.Errorf("reset: got %d", resp.StatusCode)
	}
	resp, err := do()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s", resp.Proto)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("drop over HTTP/2: body ended cleanly")
	}
}
