// Package providertest holds what the tests of the provider clients
// (llm/anthropic, llm/gemini, llm/openai) share: a fake API server that
// records what it was sent, the reading of a stream to its end, the checks
// of an assembled message against what a transcript should give, the
// shared reference corpus, and whole tests that every client must pass
// alike (transport faults, the llmtest server, fuzzing, benchmarks). What
// only one API does stays in that client's own tests.
//
// Only tests import this package.
package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// Request is what a Server saw of one request.
type Request struct {
	Path, Query string
	Header      http.Header
	// Body is the request body decoded as a JSON object, Raw as it came.
	Body map[string]any
	Raw  []byte
}

// Server is a fake provider API: each request gets the next handler (the
// last one repeats), and every request is recorded.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a Server that t closes when it ends.
func NewServer(t testing.TB, handlers ...http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{}
	n := 0
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := Request{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
		_ = json.Unmarshal(raw, &c.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, c)
		h := handlers[min(n, len(handlers)-1)]
		n++
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Last returns the last request the server saw.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// Wire is how an API answers over HTTP: the Content-Types of its event
// streams and of its error bodies, and what ends each event ("\n\n", or
// "\r\n\r\n" for Gemini). Its methods answer as that API does.
type Wire struct {
	StreamType, ErrorType, End string
}

// Stream answers with body as an event stream, flushed event by event.
func (a Wire) Stream(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", a.StreamType)
		w.WriteHeader(http.StatusOK)
		a.Send(w, body)
	}
}

// Send writes the events of body, flushing each one, so that a test can
// hold the rest of a stream back.
func (a Wire) Send(w http.ResponseWriter, body string) {
	for _, ev := range strings.SplitAfter(body, a.End) {
		io.WriteString(w, ev)
		w.(http.Flusher).Flush()
	}
}

// Fail answers with an HTTP error of status and body, with the header
// given as name, value pairs.
func (a Wire) Fail(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", a.ErrorType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// ServeFile answers with the file's bytes unchanged: as an event stream
// for status 200, else as an error body of that status.
func (a Wire) ServeFile(t testing.TB, path string, status int) *Server {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusOK {
			w.Header().Set("Content-Type", a.StreamType)
		} else {
			w.Header().Set("Content-Type", a.ErrorType)
		}
		w.WriteHeader(status)
		w.Write(body)
	})
}
