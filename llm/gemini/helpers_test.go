package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
)

const testKey = "AIzaSyTEST-secret-key-0123456789abcdef"

// chunkOf formats one streamed chunk with the given parts, finish reason
// and usage (prompt, candidates, thoughts, cached; nil for none).
func chunkOf(parts string, finish string, u []int) string {
	cand := `{"content":{"parts":[` + parts + `],"role":"model"},"index":0`
	if finish != "" {
		cand += `,"finishReason":"` + finish + `"`
	}
	cand += "}"
	s := `{"candidates":[` + cand + `]`
	if u != nil {
		s += fmt.Sprintf(`,"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"thoughtsTokenCount":%d,"cachedContentTokenCount":%d,"totalTokenCount":%d}`, u[0], u[1], u[2], u[3], u[0]+u[1]+u[2])
	}
	return data(s + `,"modelVersion":"gemini-2.5-flash","responseId":"resp1"}`)
}

func data(s string) string { return "data: " + s + "\r\n\r\n" }

func text(s string) string    { return `{"text":` + quote(s) + `}` }
func thought(s string) string { return `{"text":` + quote(s) + `,"thought":true}` }

func call(name, args, id, sig string) string {
	fc := `{"name":` + quote(name) + `,"args":` + args
	if id != "" {
		fc += `,"id":` + quote(id)
	}
	p := `{"functionCall":` + fc + `}`
	if sig != "" {
		p += `,"thoughtSignature":` + quote(sig)
	}
	return p + "}"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// textBody is a whole, well-formed answer of the given text pieces.
func textBody(pieces ...string) string {
	var b strings.Builder
	for i, p := range pieces {
		finish := ""
		u := []int{12, i + 1, 0, 0}
		if i == len(pieces)-1 {
			finish = "STOP"
		}
		b.WriteString(chunkOf(text(p), finish, u))
	}
	return b.String()
}

type captured struct {
	Path, Query string
	Header      http.Header
	Raw         []byte
}

// server is a fake Gemini API: each request gets the next handler (the
// last one repeats), and every request is recorded.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newServer(t *testing.T, handlers ...http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	n := 0
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, captured{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw})
		h := handlers[min(n, len(handlers)-1)]
		n++
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) last() captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

func stream(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		send(w, body)
	}
}

// send writes chunks, flushing each one.
func send(w http.ResponseWriter, body string) {
	for _, e := range strings.SplitAfter(body, "\r\n\r\n") {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func fail(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func client(s *server) *Client {
	return &Client{BaseURL: s.URL + "/v1beta", APIKey: testKey, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
}

func model() llm.Model {
	m, _ := llm.Lookup("google", "gemini-2.5-flash")
	return m
}

func ask(s string) *llm.Request {
	return &llm.Request{Model: model(), Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(s)}}}, Attempt: 1}
}

func run(t *testing.T, c *Client, req *llm.Request) (*llm.Message, error, []llm.EventType) {
	t.Helper()
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	var types []llm.EventType
	var failure error
	for {
		e, err := s.Next()
		if err == io.EOF {
			return s.Message(), failure, types
		}
		types = append(types, e.Type)
		if e.Type == llm.EventError {
			failure = e.Err
		}
	}
}

// parse runs the parser over body in memory.
func parse(body []byte) *llm.Stream {
	m := model()
	p := &parser{dec: sse.NewDecoder(bytes.NewReader(body)), model: &m, provider: DefaultProvider, nonce: "test"}
	return llm.NewStream(llm.Message{Role: llm.Assistant, Provider: DefaultProvider}, p.fill, nil)
}

func count(types []llm.EventType, t llm.EventType) int {
	n := 0
	for _, x := range types {
		if x == t {
			n++
		}
	}
	return n
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
