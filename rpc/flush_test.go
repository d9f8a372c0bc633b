package rpc

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/jsonl"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/session"
)

// The output is flushed when the server has written every event it has
// (issue 25: one write per read of the model's stream, not per delta), so
// these tests hold it to the other half of that promise: a line that is
// ready is written before rally waits for the model again.

// chatChunk is one Chat Completions chunk streaming text.
func chatChunk(text string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
}

const chatEnd = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// fakeSession is a session on the Chat Completions client of handler,
// served over loopback HTTP.
func fakeSession(t *testing.T, handler http.Handler) *session.Session {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	model := llm.Model{ID: "m", API: llm.APIOpenAICompletions, Provider: "fake", Input: []string{"text"}, ContextWindow: 1 << 20, MaxTokens: 1 << 16}
	sess, err := session.New(session.Config{Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", Provider: "fake"}}, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// serveRaw runs Serve on pipes and returns its input and copies of its
// output lines as they are written (nil when it ends), with no client in
// between to buffer them.
func serveRaw(t *testing.T, cfg Config) (in io.Writer, lines <-chan []byte) {
	t.Helper()
	cr, cw, wait := startServe(cfg)
	t.Cleanup(func() {
		cw.Close()
		go io.Copy(io.Discard, cr) // what the test did not read
		if err := wait(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	ch := make(chan []byte, 64)
	go func() {
		defer close(ch)
		out := jsonl.NewReader(cr, maxClientLine)
		for {
			line, err := out.Next()
			if err != nil {
				return
			}
			ch <- bytes.Clone(line)
		}
	}()
	return cw, ch
}

// nextLine is the next line of serveRaw's, failing the test when the
// output ends or rally writes nothing for 10 s (deltas is how many the
// test has read, for the message).
func nextLine(t *testing.T, lines <-chan []byte, deltas int) []byte {
	t.Helper()
	select {
	case line := <-lines:
		if line == nil {
			t.Fatalf("output ended after %d deltas", deltas)
		}
		return line
	case <-time.After(10 * time.Second):
		t.Fatalf("after %d deltas rally wrote nothing for 10 s", deltas)
	}
	return nil
}

// TestDeltaWrittenBeforeWaiting: the fake LLM sends one delta and waits
// until the client has read it on rally's output before it sends the
// next. A delta held in rally's buffer until more arrive would never be
// read: the stream would stop, and the test fails after 10 s.
func TestDeltaWrittenBeforeWaiting(t *testing.T) {
	for _, deltas := range []bool{true, false} {
		t.Run(fmt.Sprintf("delta-only=%v", deltas), func(t *testing.T) {
			const n = 5
			seen := make(chan struct{})
			sess := fakeSession(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				for i := range n {
					io.WriteString(w, chatChunk(fmt.Sprintf("w%d ", i)))
					w.(http.Flusher).Flush()
					select {
					case <-seen:
					case <-r.Context().Done():
						return
					case <-time.After(10 * time.Second):
						return // the test fails on its side
					}
				}
				io.WriteString(w, chatEnd)
			}))
			in, lines := serveRaw(t, Config{Session: sess, Deltas: deltas})
			io.WriteString(in, `{"type":"prompt","message":"go"}`+"\n")
			got := 0
		read:
			for {
				switch line := nextLine(t, lines, got); {
				case bytes.Contains(line, []byte(`"type":"text_delta"`)):
					want := fmt.Sprintf(`"delta":"w%d "`, got)
					if !bytes.Contains(line, []byte(want)) {
						t.Fatalf("delta %d: want %s in %s", got, want, line)
					}
					got++
					seen <- struct{}{}
				case string(line) == `{"type":"agent_settled"}`:
					break read
				}
			}
			if got != n {
				t.Errorf("%d deltas, want %d", got, n)
			}
		})
	}
}

// TestAbortDuringLongStream: abort written while rally streams a 50,000
// delta answer (sent in one write, then the connection stays open) ends
// the answer as aborted. The time it took is logged: it is milliseconds,
// a figure for the benchmarks (abort group), not an assertion.
func TestAbortDuringLongStream(t *testing.T) {
	var body strings.Builder
	for i := range 50000 {
		body.WriteString(chatChunk(fmt.Sprintf("w%d ", i%10)))
	}
	sess := fakeSession(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body.String())
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finishes by itself
	}))
	in, lines := serveRaw(t, Config{Session: sess, Deltas: true})
	io.WriteString(in, `{"type":"prompt","message":"go"}`+"\n")
	var t0 time.Time
	deltas := 0
	for {
		switch line := nextLine(t, lines, deltas); {
		case bytes.Contains(line, []byte(`"type":"text_delta"`)):
			if deltas++; deltas == 1 {
				t0 = time.Now()
				io.WriteString(in, `{"type":"abort"}`+"\n")
			}
		case bytes.Contains(line, []byte(`"type":"message_end"`)) && bytes.Contains(line, []byte(`"role":"assistant"`)):
			if !bytes.Contains(line, []byte(`"stopReason":"aborted"`)) {
				t.Fatalf("message_end after abort: %.200s", line)
			}
			t.Logf("abort to the aborted message_end: %v, %d deltas written", time.Since(t0), deltas)
			return
		}
	}
}
