package anthropic

import (
	"testing"

	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/llmtest"
)

func TestFakeReply(t *testing.T) {
	m := tested.FakeReply(t, llmtest.Usage{Input: 120, Output: 40, CacheRead: 1000, CacheWrite: 20})
	if m.Content[0].ThinkingSignature == "" {
		t.Errorf("thinking without its signature: %+v", m.Content[0])
	}
}

// The llmtest scripts every client plays alike.
func TestFakeHTTPErrors(t *testing.T) { tested.FakeHTTPErrors(t) }
func TestFakePresets(t *testing.T)    { tested.FakePresets(t) }

func TestFakeFaults(t *testing.T) {
	tested.FakeFaults(t, providertest.ErrorKind{Type: "overloaded_error"})
}
