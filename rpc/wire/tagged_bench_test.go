package wire

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// BenchmarkTaggedOrByHand is why the kinds that carry messages are written
// by hand (the small ones go through their JSON tags): a message_end both
// ways.
func BenchmarkTaggedOrByHand(b *testing.B) {
	m := &llm.Message{Role: llm.Assistant, API: "openai-completions", Provider: "p", Model: "m",
		Content: []llm.Content{llm.Text(strings.Repeat("word ", 1000))}, Usage: &llm.Usage{Input: 10, Output: 1000}, StopReason: llm.Stop, Timestamp: 1}
	var e session.Event = session.MessageEndEvent{Message: m}
	b.Run("by-hand", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendEvent(buf[:0], e)
		}
	})
	b.Run("tagged", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = appendTagged(buf[:0], e)
		}
	})
}
