//go:build unix

package hooks

import (
	"context"
	"github.com/rally-agent/rally/session"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/settings"
)

// BenchmarkHandle is the cost Handle adds to every event on the runner's
// subscription: for an event no hook wants (the common case, e.g. each
// message_update), and for one whose hook's queue is full (encoded, then
// dropped).
func BenchmarkHandle(b *testing.B) {
	stuck := settings.Hook{On: []string{string(session.MessageUpdate)}, Command: []string{"sh", "-c", "sleep 30"}, TimeoutMs: 60000}
	msg := &llm.Message{Role: llm.Assistant, Content: []llm.Content{llm.Text("a partial answer of a few words")}}
	update := session.MessageUpdateEvent{Message: msg, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "words", Partial: msg}}
	for _, bc := range []struct {
		name  string
		hooks []settings.Hook
	}{
		{"unmatched", []settings.Hook{{On: []string{string(session.AutoRetryEnd)}, Command: []string{"true"}}}},
		{"queue-full", []settings.Hook{stuck}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := New(Config{Hooks: bc.hooks, QueueLen: 1, Env: []string{"PATH=/usr/bin:/bin"}})
			defer r.Close(context.Background())
			b.ReportAllocs()
			for b.Loop() {
				r.Handle(Source{}, update)
			}
		})
	}
}
