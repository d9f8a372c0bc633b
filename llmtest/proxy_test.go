package llmtest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// seen is what the upstream received.
type seen struct {
	path   string
	header http.Header
	body   []byte
}

// upstream starts an llmtest Server behind a recorder of raw requests.
func upstream(t *testing.T, script ...llmtest.Step) (*url.URL, *llmtest.Server, func() []seen) {
	t.Helper()
	up := llmtest.New(script...)
	var mu sync.Mutex
	var got []seen
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.URL.Path, r.Header.Clone(), b})
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.Close(); hs.Close() })
	u, _ := url.Parse(hs.URL + "/prefix")
	return u, up, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func TestProxyInjectsFaults(t *testing.T) {
	upURL, _, upSeen := upstream(t, llmtest.Step{Text: "from upstream"})
	front := llmtest.New(
		llmtest.Step{Error: llmtest.Overloaded},
		llmtest.Step{Fault: llmtest.Pass},
		llmtest.Step{Fault: llmtest.Drop, After: 1},
		llmtest.Step{},
	)
	front.Upstream = upURL
	front.Start(t)
	hdr := map[string]string{"x-api-key": "sk-ant-api03-PROXYSECRET42", "anthropic-version": "2023-06-01", "x-rally-attempt": "2"}

	// 1: a fault, answered locally.
	resp, err := post(context.Background(), t, front.URL, llmtest.AnthropicMessages, hdr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 529 || len(upSeen()) != 0 {
		t.Fatalf("fault step: status %d, upstream saw %d", resp.StatusCode, len(upSeen()))
	}
	// 2: pass, forwarded with body and headers intact.
	resp, err = post(context.Background(), t, front.URL, llmtest.AnthropicMessages, hdr)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := readAll(resp.Body)
	resp.Body.Close()
	if r := assemble(t, llmtest.AnthropicMessages, evs); err != nil || r.text != "from upstream" || !r.terminal {
		t.Errorf("forwarded reply: %q %v", r.text, err)
	}
	got := upSeen()
	if len(got) != 1 {
		t.Fatalf("upstream saw %d requests", len(got))
	}
	if got[0].path != "/prefix/v1/messages" || string(got[0].body) != bodyFor(llmtest.AnthropicMessages) {
		t.Errorf("upstream got %s %s", got[0].path, got[0].body)
	}
	for k, v := range hdr {
		if got[0].header.Get(k) != v {
			t.Errorf("upstream header %s = %q, want %q", k, got[0].header.Get(k), v)
		}
	}
	// 3: a drop, local again; 4: a plain step, forwarded.
	resp = mustPost(t, front.URL, llmtest.OpenAICompletions)
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("drop: body ended cleanly")
	}
	resp = mustPost(t, front.URL, llmtest.OpenAICompletions)
	evs, _ = readAll(resp.Body)
	if r := assemble(t, llmtest.OpenAICompletions, evs); r.text != "from upstream" {
		t.Errorf("plain step through the proxy: %q", r.text)
	}
	// An unknown path goes through without taking a step.
	r2, err := http.Get(front.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()

	var outs []string
	for _, r := range front.Requests() {
		outs = append(outs, r.Outcome)
		if strings.Contains(r.Credential, "PROXYSECRET") {
			t.Error("key in the proxy's record")
		}
	}
	if strings.Join(outs, ",") != "http 529,upstream 200,drop after 1,upstream 200,upstream 200" {
		t.Errorf("outcomes %q", outs)
	}
	if reqs := front.Requests(); reqs[4].Step != 0 || len(upSeen()) != 3 {
		t.Errorf("unknown path: step %d, upstream saw %d", reqs[4].Step, len(upSeen()))
	}
}

// The proxy flushes as the upstream writes: chunks of a stalled upstream
// stream reach the client, and a client that leaves ends both handlers.
func TestProxyStreamsAsItArrives(t *testing.T) {
	upURL, up, _ := upstream(t, llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "one two three"})
	upDone := make(chan llmtest.Request, 1)
	up.OnRequest = func(r llmtest.Request) { upDone <- r }
	front := llmtest.New()
	front.Upstream = upURL
	frontDone := make(chan llmtest.Request, 1)
	front.OnRequest = func(r llmtest.Request) { frontDone <- r }
	front.Start(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := post(ctx, t, front.URL, llmtest.OpenAIResponses, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := newSSE(resp.Body)
	var evs []event
	for assemble(t, llmtest.OpenAIResponses, evs).deltas < 2 {
		ev, err := sr.next()
		if err != nil {
			t.Fatalf("read through the proxy: %v", err)
		}
		evs = append(evs, ev)
	}
	cancel()
	if o := outcomes(t, frontDone, 1); o[0] != "upstream 200" {
		t.Errorf("front outcome %q", o[0])
	}
	if o := outcomes(t, upDone, 1); o[0] != "stall after 2" {
		t.Errorf("upstream outcome %q", o[0])
	}
}

func TestProxyUpstreamDown(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(hs.URL)
	hs.Close()
	front := llmtest.New()
	front.Upstream = u
	front.Start(t)
	resp := mustPost(t, front.URL, llmtest.OpenAICompletions)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 502 || !strings.Contains(string(b), "llmtest: upstream") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	if o := front.Requests()[0].Outcome; o != "upstream error" {
		t.Errorf("outcome %q", o)
	}
}
