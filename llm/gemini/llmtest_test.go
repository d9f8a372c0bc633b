package gemini

import (
	"testing"

	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/llmtest"
)

func TestFakeReply(t *testing.T) {
	tested.FakeReply(t, llmtest.Usage{Input: 120, Output: 40, CacheRead: 1000})
}

// The llmtest scripts every client plays alike.
func TestFakeHTTPErrors(t *testing.T) { tested.FakeHTTPErrors(t) }
func TestFakePresets(t *testing.T)    { tested.FakePresets(t) }

func TestFakeFaults(t *testing.T) {
	tested.FakeFaults(t, providertest.ErrorKind{Code: "UNAVAILABLE"}, providertest.Fault{
		Name: "rate limit event",
		Step: llmtest.Step{Fault: llmtest.ErrorEvent, Error: llmtest.RateLimited, After: 1},
		Err:  providertest.ErrorKind{Code: "RESOURCE_EXHAUSTED"},
	})
}
