package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/anthropic"
	"github.com/rally-agent/rally/llm/gemini"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/settings"
)

// TestProviderForOptions: every client gets the provider entry's
// settings, the event cap included, as the same llm.ClientOptions.
func TestProviderForOptions(t *testing.T) {
	want := llm.ClientOptions{BaseURL: "http://127.0.0.1:9/v1", APIKey: "k", Provider: "mine",
		Timeout: 1500 * time.Millisecond, IdleTimeout: 2500 * time.Millisecond, MaxEventBytes: 4096}
	for _, api := range []string{settings.APIOpenAICompletions, settings.APIOpenAIResponses, settings.APIAnthropicMessages, settings.APIGoogle} {
		t.Run(api, func(t *testing.T) {
			target := settings.Target{Provider: "mine", Config: settings.Provider{API: api, BaseURL: want.BaseURL, TimeoutMs: 1500, IdleTimeoutMs: 2500, MaxEventBytes: 4096}}
			p, err := providerFor(target, "k")
			if err != nil {
				t.Fatal(err)
			}
			var got llm.ClientOptions
			switch c := p.(type) {
			case *openai.Completions:
				got = c.ClientOptions
			case *openai.Responses:
				got = c.ClientOptions
			case *anthropic.Client:
				got = c.ClientOptions
			case *gemini.Client:
				got = c.ClientOptions
			default:
				t.Fatalf("client %T", p)
			}
			if got.BaseURL != want.BaseURL || got.APIKey != want.APIKey || got.Provider != want.Provider ||
				got.Timeout != want.Timeout || got.IdleTimeout != want.IdleTimeout || got.MaxEventBytes != want.MaxEventBytes {
				t.Errorf("options %+v, want %+v", got, want)
			}
		})
	}
}

// TestEventTooLarge: providers.NAME.maxEventBytes reaches the client; an
// event over it fails the prompt at once (fatal: one request, no retry),
// saying so under the provider's name.
func TestEventTooLarge(t *testing.T) {
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: strings.Repeat("x", 8192), Chunks: 1})
	os.MkdirAll(".rally", 0o755)
	cfg := `{"retry":{"baseDelayMs":1},"providers":{"big":{"api":"openai-completions","baseUrl":"` + srv.URL + `/v1","maxEventBytes":4096}}}`
	os.WriteFile(".rally/settings.json", []byte(cfg), 0o644)
	_, errOut, code := run(t, "", "--provider", "big", "--model", "m", "-p", "hi")
	if code != 1 || !strings.Contains(errOut, "big: read stream: sse: event too large") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: too large is fatal", n)
	}
}
