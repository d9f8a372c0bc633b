package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// readBG reads a Responses stream's events: their sequence numbers and
// the text deltas.
func readBG(t *testing.T, r io.Reader) (seqs []int, text string) {
	t.Helper()
	sr := newSSE(r)
	var b strings.Builder
	for {
		ev, err := sr.next()
		if err != nil {
			return seqs, b.String()
		}
		var e struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
			Seq   int    `json:"sequence_number"`
		}
		if json.Unmarshal([]byte(ev.data), &e) != nil {
			t.Fatalf("event %q is not JSON", ev.data)
		}
		seqs = append(seqs, e.Seq)
		if e.Type == "response.output_text.delta" {
			b.WriteString(e.Delta)
		}
	}
}

// TestBackgroundResume: a background response whose connection dropped
// after 3 chunks goes on server-side; GET …/responses/{id}?stream=true&
// starting_after=N replays exactly the events after N, so the two
// connections together carry the answer once, in order. Unknown ids and
// bad cursors get OpenAI's errors; a request without background stores
// nothing.
func TestBackgroundResume(t *testing.T) {
	text := "one two three four five six seven"
	s := llmtest.NewServer(t, llmtest.Step{Text: text, Fault: llmtest.Drop, After: 3, Delay: time.Millisecond})
	body := `{"model":"m","stream":true,"background":true,"store":true,"input":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	seqs, first := readBG(t, resp.Body)
	resp.Body.Close()
	if first != "one two three" || len(seqs) == 0 {
		t.Fatalf("first connection %q (seqs %v), want the first 3 words", first, seqs)
	}
	last := seqs[len(seqs)-1]
	get := func(q string) *http.Response {
		t.Helper()
		r, err := http.Get(s.URL + "/v1/responses/resp_llmtest1" + q)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Body.Close() })
		return r
	}
	r := get("?stream=true&starting_after=" + strconv.Itoa(last))
	rest, second := readBG(t, r.Body)
	if r.StatusCode != 200 || first+second != text {
		t.Fatalf("resumed %d %q, want the rest: %q", r.StatusCode, second, strings.TrimPrefix(text, first))
	}
	if rest[0] != last+1 {
		t.Errorf("resumed at sequence %d, want %d", rest[0], last+1)
	}
	if got := s.Requests()[1].Outcome; got != "resumed after "+strconv.Itoa(last) {
		t.Errorf("outcome %q", got)
	}
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"unknown id", "/v1/responses/resp_nope?stream=true", 404},
		{"bad cursor", "/v1/responses/resp_llmtest1?stream=true&starting_after=x", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.Get(s.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != tc.status || !strings.Contains(string(b), "invalid_request_error") {
				t.Errorf("%d %s, want %d in OpenAI's shape", r.StatusCode, b, tc.status)
			}
		})
	}
	t.Run("not background", func(t *testing.T) {
		s := llmtest.NewServer(t, llmtest.Step{Text: text, Fault: llmtest.Drop, After: 3})
		resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","stream":true,"input":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		readBG(t, resp.Body)
		resp.Body.Close()
		r, err := http.Get(s.URL + "/v1/responses/resp_llmtest1?stream=true")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 404 {
			t.Errorf("a response without background was stored: %d", r.StatusCode)
		}
	})
}
