package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// Plain net/http clients and a small SSE reader of the tests' own: the
// server is checked against the wire formats, not against rally's clients.

// pathFor is a streaming request path for api, under the prefix its
// provider uses.
func pathFor(api llmtest.API) string { return formats[api].path }

// bodyFor is a streaming request body with two conversation entries.
func bodyFor(api llmtest.API) string { return formats[api].body }

// post sends api's request to base with the given headers.
func post(ctx context.Context, t *testing.T, base string, api llmtest.API, hdr map[string]string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+pathFor(api), strings.NewReader(bodyFor(api)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// mustPost is post for a request that must get a response.
func mustPost(t *testing.T, base string, api llmtest.API) *http.Response {
	t.Helper()
	resp, err := post(context.Background(), t, base, api, nil)
	if err != nil {
		t.Fatalf("%s: %v", api, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type event struct{ name, data string }

type sseReader struct{ br *bufio.Reader }

func newSSE(r io.Reader) *sseReader { return &sseReader{bufio.NewReader(r)} }

// next returns the next event; io.EOF at a clean end.
func (s *sseReader) next() (event, error) {
	var ev event
	has := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && has {
				return ev, nil
			}
			if err == io.EOF && line != "" {
				err = io.ErrUnexpectedEOF // an event cut in the middle
			}
			return ev, err
		}
		l := strings.TrimRight(line, "\r\n")
		switch {
		case l == "":
			if has {
				return ev, nil
			}
		case strings.HasPrefix(l, ":"):
		case strings.HasPrefix(l, "event:"):
			ev.name, has = strings.TrimSpace(l[6:]), true
		case strings.HasPrefix(l, "data:"):
			d := strings.TrimPrefix(l[5:], " ")
			if ev.data != "" {
				d = ev.data + "\n" + d
			}
			ev.data, has = d, true
		}
	}
}

// readAll reads events to the end; err is what ended the stream (nil for
// a clean end).
func readAll(r io.Reader) ([]event, error) {
	s := newSSE(r)
	var evs []event
	for {
		ev, err := s.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

type toolOut struct{ id, name, args string }

// result is a stream assembled the way a client would.
type result struct {
	text, thinking string
	tools          []toolOut
	stop           string
	usage          map[string]any
	errType        string
	terminal       bool
	deltas         int
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data is not JSON: %v\n%s", err, data)
	}
	return m
}

func get(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, ok := m.(map[string]any)
			if !ok {
				return nil
			}
			m = mm[k]
		case int:
			a, ok := m.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			m = a[k]
		}
	}
	return m
}

func str(m any, path ...any) string {
	s, _ := get(m, path...).(string)
	return s
}

// assemble reads api's stream the way a client would.
func assemble(t *testing.T, api llmtest.API, evs []event) result {
	t.Helper()
	return formatOf(t, api).assemble(t, evs)
}

// outcomes waits for n finished requests reported through OnRequest, and
// returns their outcomes in the order they finished.
func outcomes(t *testing.T, ch <-chan llmtest.Request, n int) []string {
	t.Helper()
	var out []string
	for range n {
		select {
		case r := <-ch:
			out = append(out, r.Outcome)
		case <-time.After(10 * time.Second):
			// A guard against a hang, not a timing assumption.
			t.Fatalf("no request finished after 10s; got %q so far", out)
		}
	}
	return out
}

// started starts a Server that reports finished requests on the returned
// channel.
func started(t *testing.T, script ...llmtest.Step) (*llmtest.Server, <-chan llmtest.Request) {
	t.Helper()
	ch := make(chan llmtest.Request, 64)
	s := llmtest.New(script...)
	s.OnRequest = func(r llmtest.Request) { ch <- r }
	s.Start(t)
	return s, ch
}
