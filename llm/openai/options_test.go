package openai

import (
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// tested are the two clients as the shared tests of providertest see them
// (only the tests of llm.ClientOptions use these; the rest of this
// package's tests predate the shared ones).
var tested = map[string]*providertest.Client{
	"completions": sharedClient(func(o llm.ClientOptions) llm.Provider { return &Completions{ClientOptions: o} },
		func(pieces ...string) string {
			var chunks []string
			for _, p := range pieces {
				chunks = append(chunks, textChunk(p))
			}
			return chatStream(append(chunks, finishChunk("stop"), "[DONE]")...)
		}),
	"responses": sharedClient(func(o llm.ClientOptions) llm.Provider { return &Responses{ClientOptions: o} },
		func(pieces ...string) string {
			var evs []string
			for _, p := range pieces {
				evs = append(evs, respText(p))
			}
			return respStream(append(evs, respCompleted)...)
		}),
}

func sharedClient(new func(llm.ClientOptions) llm.Provider, whole func(...string) string) *providertest.Client {
	return &providertest.Client{
		Name:  "openai",
		New:   new,
		Key:   testKey,
		Model: llm.Model{ID: "test-model"},
		Wire:  providertest.Wire{StreamType: "text/event-stream", ErrorType: "application/json", End: "\n\n"},
		Whole: whole,
	}
}

func TestProviderName(t *testing.T) {
	for name, c := range tested {
		t.Run(name, c.ProviderName)
	}
}

func TestEventTooLarge(t *testing.T) {
	for name, c := range tested {
		t.Run(name, c.EventTooLarge)
	}
}

func TestPartialKeyEcho(t *testing.T) {
	for name, c := range tested {
		t.Run(name, c.PartialKeyEcho)
	}
}
