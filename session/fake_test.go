package session

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// step is one scripted model call.
type step struct {
	text  string        // streamed as words
	calls []llm.Content // tool calls after the text
	err   error         // returned before the stream starts
	// midErr fails the stream after text was streamed.
	midErr error
	// block makes the stream wait for its context after the text.
	block bool
	// usage is reported at the end; nil reports 10 input, 5 output.
	usage *llm.Usage
}

// fake is an in-memory provider playing steps, one per call; it records
// every request. It needs no network, so synctest can drive its timing.
type fake struct {
	mu    sync.Mutex
	steps []step
	reqs  []*llm.Request
}

func (f *fake) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	f.mu.Lock()
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	f.reqs = append(f.reqs, &cp)
	i := len(f.reqs) - 1
	st := step{text: "done"}
	if i < len(f.steps) {
		st = f.steps[i]
	}
	f.mu.Unlock()
	if st.err != nil {
		return nil, st.err
	}
	phase := 0
	fill := func(b *llm.Builder) error {
		phase++
		switch phase {
		case 1:
			if st.text != "" {
				b.Text("0", st.text)
			}
			return nil
		case 2:
			if st.midErr != nil {
				return st.midErr
			}
			if st.block {
				<-ctx.Done()
				return ctx.Err()
			}
			for k, c := range st.calls {
				b.ToolCall(llm.Key(k+1), c.ID, c.Name, string(c.Arguments))
			}
			u := llm.Usage{Input: 10, Output: 5}
			if st.usage != nil {
				u = *st.usage
			}
			b.Usage(u)
			b.Finish(llm.Stop)
			return nil
		}
		return io.EOF
	}
	return llm.NewStream(llm.Message{Role: llm.Assistant, Provider: "fake", Model: "m", Timestamp: llm.Now()}, fill, nil), nil
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fake) request(i int) *llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[i]
}

func apiErr(status int, body string, header ...string) error {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	typ, _, msg := "", "", body
	var probe struct {
		Error struct{ Type, Message string }
	}
	if json.Unmarshal([]byte(body), &probe) == nil && probe.Error.Message != "" {
		typ, msg = probe.Error.Type, probe.Error.Message
	}
	return &llm.APIError{Provider: "fake", StatusCode: status, Type: typ, Message: msg, Body: body, Header: h}
}

var (
	overloaded = func() error {
		return apiErr(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}
	unavailable = func() error { return apiErr(503, `{"error":{"message":"service unavailable","type":"server_error"}}`) }
	badKey      = func() error {
		return apiErr(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}
)

// recorder collects a session's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// of is the events of kind T r recorded.
func of[T Event](r *recorder) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, e := range r.events {
		if e, ok := e.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, string(e.Kind()))
	}
	return out
}

// newSession builds a session over f with the default policy and a
// recorder; stop unsubscribes (delivering every event).
func newSession(t *testing.T, f *fake, cfg Config) (*Session, *recorder, func()) {
	t.Helper()
	cfg.Provider = f
	if cfg.Model.ID == "" {
		cfg.Model = llm.Model{ID: "m", Provider: "fake", ContextWindow: 100000}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	return s, rec, s.Subscribe(rec.add)
}

// counter is a tool that counts its runs.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Spec() llm.Tool {
	return llm.Tool{Name: "count", Description: "counts", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (c *counter) Run(context.Context, json.RawMessage) (tool.Result, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return tool.Result{Content: []llm.Content{llm.Text("counted")}}, nil
}

var _ = AgentEnd
var _ = time.Second
