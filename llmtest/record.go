package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Request is what the Server saw of one request, and what it did.
type Request struct {
	// Seq numbers the requests from 1, in arrival order.
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	// Step is the 1-based script step that answered, or 0 when none did
	// (an empty script, an unknown path).
	Step   int    `json:"step"`
	Method string `json:"method"`
	Path   string `json:"path"`
	API    API    `json:"api,omitempty"`
	// Attempt is the x-rally-attempt header, as sent.
	Attempt string `json:"attempt,omitempty"`
	// AuthHeader names where the credential came from: "authorization",
	// "x-api-key", "x-goog-api-key" or "key" (the query parameter).
	AuthHeader string `json:"authHeader,omitempty"`
	// Credential is the key, redacted to its first three and last four
	// characters ("sk-…1234"); never the key itself.
	Credential string `json:"credential,omitempty"`
	Model      string `json:"model,omitempty"`
	// Messages counts the conversation entries in the body (messages,
	// input or contents).
	Messages int `json:"messages"`
	// Outcome is what the Server did: "ok", "http 503", "reset",
	// "drop after 3", "stall after 2", "error event after 2", "drop
	// mid-body" and "stall before headers" (no stream asked for),
	// "models" (GET …/models), "http 400 malformed body", "replay",
	// "upstream 200", "upstream error", "invalid step", "client gone
	// after 1" (the client left during a delay), "aborted after 1" (the
	// Server was closed), or "" until decided. It is recorded before the client can see it
	// happen, so once a client has read a stream's end, Requests has it.
	Outcome string `json:"outcome"`
	// DurationMs is the time the handler took; 0 until it returned.
	DurationMs int64 `json:"durationMs"`
}

// credential finds the API key a request carries, in the places the four
// providers read it from.
func credential(r *http.Request) (where, key string) {
	if k := r.Header.Get("x-api-key"); k != "" {
		return "x-api-key", k
	}
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return "x-goog-api-key", k
	}
	if a := r.Header.Get("Authorization"); a != "" {
		if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			return "authorization", strings.TrimSpace(a[7:])
		}
		return "authorization", a
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return "key", k
	}
	return "", ""
}

// redact keeps enough of a key to tell two keys apart in a log, and never
// enough to use it: the first three and last four characters of a key of
// 16 or more, nothing of a shorter one.
func redact(key string) string {
	if key == "" {
		return ""
	}
	r := []rune(key)
	if len(r) < 16 {
		return "[redacted]"
	}
	return string(r[:3]) + "…" + string(r[len(r)-4:])
}

// Requests returns a copy of every request seen so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// WriteLog writes every request seen so far as JSON lines.
func (s *Server) WriteLog(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range s.Requests() {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("llmtest: write log: %w", err)
		}
	}
	return nil
}

// finish completes the record when the handler returns, and tells the Log
// and OnRequest.
func (s *Server) finish(i int, outcome string) {
	s.mu.Lock()
	rec := &s.reqs[i]
	rec.Outcome = outcome
	rec.DurationMs = s.now().Sub(rec.Time).Milliseconds()
	done := *rec
	if s.Log != nil {
		line, err := marshal(done)
		if err == nil {
			_, err = s.Log.Write(append(line, '\n'))
		}
		if err != nil && s.logErr == nil {
			s.logErr = err
		}
	}
	s.mu.Unlock()
	if s.OnRequest != nil {
		s.OnRequest(done)
	}
}

// LogErr reports the first error writing to Log, if any.
func (s *Server) LogErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logErr != nil {
		return fmt.Errorf("llmtest: write log: %w", s.logErr)
	}
	return nil
}
