package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// fake is the fake LLM on a loopback port for the whole bench. Each
// measurement installs the handler it needs; the URL stays the same, so an
// agent's provider settings are written once per process.
type fake struct {
	URL string // base URL, without /v1
	srv *http.Server
	ln  net.Listener
	h   atomic.Pointer[http.Handler]
	// requests counts every request the installed handlers answered.
	requests atomic.Int64
}

func startFake() (*fake, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: fake llm: %w", err)
	}
	f := &fake{URL: "http://" + ln.Addr().String(), ln: ln}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	h := f.h.Load()
	if h == nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		// Agents probe /models and the like; only completions are scripted.
		http.NotFound(w, r)
		return
	}
	f.requests.Add(1)
	(*h).ServeHTTP(w, r)
}

// use installs h for the requests from now on.
func (f *fake) use(h http.Handler) { f.h.Store(&h) }

func (f *fake) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		_ = f.srv.Close()
	}
}

// recorded is step's Chat Completions answer, rendered once by llmtest and
// then served in one write per request: the fake LLM's own per-chunk cost
// (a JSON encoding and a write each) would otherwise be what a streaming
// measurement measures.
func recorded(step llmtest.Step) http.Handler {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"fake-model","stream":true,"messages":[]}`))
	llmtest.New(step).ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
}

// words is an answer of n one-word deltas.
func words(n int) llmtest.Step {
	return llmtest.Step{Text: strings.TrimSpace(strings.Repeat("word ", n)), Chunks: n}
}

// gate is a rate limiter the way a real provider enforces one: after the
// first request it answers 429 (with retry-after when hint > 0, else a 503
// overload) to every request until wait has passed since that first
// failure, then the answer. It records when the failure was sent and how
// many requests came, so an agent that retries early is seen doing so.
type gate struct {
	fail, ok http.Handler
	wait     time.Duration

	mu       sync.Mutex
	failedAt time.Time
	n        int
}

func newGate(wait time.Duration, hint bool) *gate {
	g := &gate{wait: wait, ok: llmtest.New(llmtest.Step{Text: "recovered"})}
	if hint {
		secs := fmt.Sprint(int(wait.Round(time.Second) / time.Second))
		g.fail = llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": secs}})
	} else {
		g.fail = llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
	}
	return g
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.n++
	now := time.Now()
	if g.failedAt.IsZero() {
		g.failedAt = now
	}
	open := now.Sub(g.failedAt) >= g.wait
	g.mu.Unlock()
	if open {
		g.ok.ServeHTTP(w, r)
		return
	}
	g.fail.ServeHTTP(w, r)
}

func (g *gate) stats() (failedAt time.Time, requests int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failedAt, g.n
}

var errUnsupported = errors.New("unsupported")
