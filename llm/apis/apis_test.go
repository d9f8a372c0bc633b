package apis_test

import (
	"context"
	"io"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/llmtest"
)

// TestEveryAPIAgainstTheFakeLLM: every networked API of the registry is
// one the fake LLM serves, and the client its definition builds, pointed
// at the fake as its default API root would be, streams an answer over
// real HTTP.
func TestEveryAPIAgainstTheFakeLLM(t *testing.T) {
	served := llmtest.APIs()
	for _, name := range apis.Networked() {
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(served, llmtest.API(name)) {
				t.Fatalf("llmtest does not serve %s", name)
			}
			d, _ := apis.Lookup(name)
			root, err := url.Parse(d.DefaultBaseURL)
			if err != nil || root.Host == "" {
				t.Fatalf("default base URL %q: %v", d.DefaultBaseURL, err)
			}
			srv := llmtest.NewServer(t, llmtest.Step{Text: "hello from " + name})
			p := d.New(llm.ClientOptions{BaseURL: srv.URL + root.Path, APIKey: "test-key"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := p.Stream(ctx, &llm.Request{Model: llm.Model{ID: "m", API: name}, Messages: []llm.Message{
				{Role: llm.User, Content: []llm.Content{llm.Text("hi")}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for {
				if _, err := st.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if m := st.Message(); m.TextOf() != "hello from "+name || m.ErrorMessage != "" {
				t.Errorf("answer %q, error %q", m.TextOf(), m.ErrorMessage)
			}
			if got := srv.Requests()[0].API; got != llmtest.API(name) {
				t.Errorf("the fake saw a %s request", got)
			}
		})
	}
}

// TestLookup: names resolve to their definitions, and nothing else does.
func TestLookup(t *testing.T) {
	for _, n := range apis.Names() {
		if d, ok := apis.Lookup(n); !ok || d.Name != n || d.New == nil || d.Doc == "" {
			t.Errorf("%s: %+v %v", n, d, ok)
		}
	}
	if _, ok := apis.Lookup("openai"); ok {
		t.Error("a provider name resolved as an API")
	}
	if slices.Contains(apis.Networked(), llm.APISim) {
		t.Error("the sim is listed as served over HTTP")
	}
}
