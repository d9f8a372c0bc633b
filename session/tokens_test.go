package session

import (
	"context"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

// TestTokenEstimate pins the one estimate: four characters a token, a flat
// cost per image (not its base64 length), four tokens of framing.
func TestTokenEstimate(t *testing.T) {
	img := llm.Content{Type: llm.ImageType, Data: strings.Repeat("A", 40000), MimeType: "image/png"}
	call := llm.Content{Type: llm.ToolCallType, ID: "c", Name: "bash", Arguments: []byte(`{"command":"ls"}`)}
	tests := []struct {
		name string
		m    llm.Message
		want int
	}{
		{"empty", llm.Message{Role: llm.User}, 4},
		{"text", llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(strings.Repeat("x", 400))}}, 104},
		{"rounds up", llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("hello")}}, 6},
		{"image", llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("look"), img}}, 1 + 1200 + 4},
		{"thinking and a call", llm.Message{Role: llm.Assistant, Content: []llm.Content{{Type: llm.ThinkingType, Thinking: "hmm."}, call}}, (4+4+16+3)/4 + 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llm.EstimateTokens([]llm.Message{tt.m}); got != tt.want {
				t.Errorf("estimate %d, want %d", got, tt.want)
			}
		})
	}
}

// TestContextTokens: the last good answer's usage (input, cache, output)
// plus the estimate of what follows; a failed answer's usage is not used.
func TestContextTokens(t *testing.T) {
	user := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(strings.Repeat("x", 40))}} // 14
	good := llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Usage: &llm.Usage{Input: 100, CacheRead: 20, CacheWrite: 5, Output: 7, TotalTokens: 999}}
	failed := llm.Message{Role: llm.Assistant, StopReason: llm.Error, Usage: &llm.Usage{Input: 5000}}
	tests := []struct {
		name string
		ms   []llm.Message
		want int
	}{
		{"no usage", []llm.Message{user, user}, 28},
		{"usage then more", []llm.Message{user, good, user}, 132 + 14},
		{"a failed answer's usage is skipped", []llm.Message{user, good, user, failed}, 132 + 14 + 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contextTokens(tt.ms); got != tt.want {
				t.Errorf("contextTokens %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOneMeasure: get_session_stats' context size (Stats.ContextTokens)
// and compaction's tokensBefore measure the same context the same way.
func TestOneMeasure(t *testing.T) {
	img := llm.Content{Type: llm.ImageType, Data: strings.Repeat("A", 40000), MimeType: "image/png"}
	hist := history(6)
	hist[0].Content = append(hist[0].Content, img)
	f := &fake{steps: []step{{text: "summary"}}}
	s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: hist}, Compaction: small})
	defer stop()
	before := s.Stats().ContextTokens
	res, err := s.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensBefore != before || before != contextTokens(hist) || before < llm.ImageTokens {
		t.Errorf("compaction measured %d, stats %d, contextTokens %d", res.TokensBefore, before, contextTokens(hist))
	}
}
