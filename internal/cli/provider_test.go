package cli

import (
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/anthropic"
	"github.com/rally-agent/rally/llm/gemini"
	"github.com/rally-agent/rally/llm/openai"
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
