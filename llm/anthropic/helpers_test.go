package anthropic

import (
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

	"github.com/rally-agent/rally/llm"
)

const testKey = "sk-ant-api03-test-secret-key-0123456789"

// ev formats one server-sent event as the API writes it.
func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// Building blocks of a stream, in the API's own shapes.
func msgStart(in, cacheRead, cacheWrite, out int) string {
	return ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":%d}}}`, in, cacheRead, cacheWrite, out))
}

func blockStart(i int, block string) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
}

func textDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, quote(s)))
}

func jsonDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, quote(s)))
}

func thinkingDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, i, quote(s)))
}

func signatureDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, i, quote(s)))
}

func blockStop(i int) string {
	return ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func msgDelta(stop string, out int) string {
	return ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out))
}

var (
	ping    = ev("ping", `{"type": "ping"}`)
	msgStop = ev("message_stop", `{"type":"message_stop"}`)
)

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// textBody is a whole, well-formed answer of the given text pieces.
func textBody(pieces ...string) string {
	var b strings.Builder
	b.WriteString(msgStart(25, 0, 0, 1))
	b.WriteString(blockStart(0, `{"type":"text","text":""}`))
	b.WriteString(ping)
	for _, p := range pieces {
		b.WriteString(textDelta(0, p))
	}
	b.WriteString(blockStop(0))
	b.WriteString(msgDelta("end_turn", 15))
	b.WriteString(msgStop)
	return b.String()
}

// captured is what the fake API saw of one request.
type captured struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// server is a fake Messages API: each request gets the next handler (the
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
		c := captured{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
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

func (s *server) last() captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// stream answers with body as an event stream, flushed event by event.
func stream(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		send(w, body)
	}
}

// send writes events, flushing each one.
func send(w http.ResponseWriter, body string) {
	for _, e := range strings.SplitAfter(body, "\n\n") {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// fail answers with an HTTP error.
func fail(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func client(s *server) *Client {
	return &Client{BaseURL: s.URL, APIKey: testKey, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
}

func model() llm.Model {
	m, _ := llm.Lookup("anthropic", "claude-sonnet-4-5")
	return m
}

func ask(text string) *llm.Request {
	return &llm.Request{Model: model(), Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text(text)}}}, Attempt: 1}
}

// run streams req from c to its end and returns the message, the stream's
// error and the event types seen.
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

// semantically reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
