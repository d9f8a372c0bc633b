package openai

import (
	"context"
	"encoding/json"
	"errors"
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

// testModel has prices, so cost is checked too.
var testModel = llm.Model{
	ID: "test-model", Provider: "testprov", ContextWindow: 100000, MaxTokens: 1000,
	Cost: llm.ModelCost{Input: 1, Output: 2, CacheRead: 0.5},
}

// client is one of the two APIs under test, made for a base URL.
type client struct {
	name string
	new  func(base string) llm.Provider
}

var clients = []client{
	{"completions", func(base string) llm.Provider {
		return &Completions{ClientOptions: llm.ClientOptions{BaseURL: base, APIKey: testKey}}
	}},
	{"responses", func(base string) llm.Provider {
		return &Responses{ClientOptions: llm.ClientOptions{BaseURL: base, APIKey: testKey}}
	}},
}

// testKey is a fake key shaped like OpenAI's, so that redaction of both
// the exact key and key-shaped tokens is exercised.
const testKey = "sk-test-0123456789abcdefSECRET"

// request is a small request for model m.
func request(m llm.Model) *llm.Request {
	return &llm.Request{Model: m, Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("hi")}}}, Attempt: 1}
}

// serveBytes answers every request with body as an event stream.
func serveBytes(t testing.TB, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// run streams one call from p and returns the final message and failure.
func run(t testing.TB, p llm.Provider, req *llm.Request) (*llm.Message, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return llm.Collect(s)
}

// events streams one call and returns every event type, in order.
func events(t *testing.T, p llm.Provider) ([]llm.EventType, *llm.Message) {
	t.Helper()
	s, err := p.Stream(context.Background(), request(testModel))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []llm.EventType
	for {
		e, err := s.Next()
		if err == io.EOF {
			return got, s.Message()
		}
		got = append(got, e.Type)
	}
}

// chatStream writes Chat Completions chunks as SSE.
func chatStream(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: ")
		b.WriteString(c)
		b.WriteString("\n\n")
	}
	return b.String()
}

// textChunk is a chat chunk carrying text.
func textChunk(s string) string {
	q, _ := json.Marshal(s)
	return `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(q) + `},"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

// respStream writes Responses events as SSE, the event name taken from
// each event's type.
func respStream(evs ...string) string {
	var b strings.Builder
	for _, e := range evs {
		var t struct{ Type string }
		json.Unmarshal([]byte(e), &t)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", t.Type, e)
	}
	return b.String()
}

func respText(s string) string {
	q, _ := json.Marshal(s)
	return `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":` + string(q) + `}`
}

const respCompleted = `{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5,"total_tokens":15}}}`

// faultServer streams n text pieces in a provider's format, then does what
// after says: "end" sends the terminal events, "close" ends the body
// cleanly without them, "cut" breaks the connection, "stall" waits for the
// client to go away.
type faultServer struct {
	api   string // "completions" or "responses"
	n     int
	after string
	// stalled is closed when a stall begins; left is closed when the
	// stalled handler saw the client go away.
	stalled, left chan struct{}
	once          sync.Once
}

func (f *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for i := range f.n {
		if f.api == "completions" {
			io.WriteString(w, chatStream(textChunk(fmt.Sprintf("part%d ", i))))
		} else {
			io.WriteString(w, respStream(respText(fmt.Sprintf("part%d ", i))))
		}
		fl.Flush()
	}
	switch f.after {
	case "end":
		if f.api == "completions" {
			io.WriteString(w, chatStream(finishChunk("stop"), "[DONE]"))
		} else {
			io.WriteString(w, respStream(respCompleted))
		}
	case "cut":
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the chunked body never gets its last chunk
		}
	case "stall":
		f.once.Do(func() { close(f.stalled) })
		select {
		case <-r.Context().Done():
			close(f.left)
		case <-time.After(10 * time.Second):
		}
	}
}

// classOf is the retry class of a stream's failure.
func classOf(err error) string { return llm.Classify(err).Class.String() }

// keyFree fails the test if the key shows anywhere in err.
func keyFree(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	check := func(where, s string) {
		if strings.Contains(s, testKey) || strings.Contains(s, "SECRET") {
			t.Errorf("key in %s: %q", where, s)
		}
	}
	check("Error()", err.Error())
	var ae *llm.APIError
	if errors.As(err, &ae) {
		check("Message", ae.Message)
		check("Body", ae.Body)
		check("Type", ae.Type)
		check("Code", ae.Code)
		for k, v := range ae.Header {
			check("header "+k, strings.Join(v, ","))
		}
	}
}
