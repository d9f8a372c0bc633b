package session

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/anthropic"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/session/journal"
)

// longContext is n messages shaped like a coding session's: a prompt, an
// answer with a tool call, its result, … (n a multiple of 3 plus one
// ends on a prompt, every call with its result).
func longContext(n int) []llm.Message {
	answer := strings.Repeat("Some answer text of a typical length, with \"quotes\" and a\nnewline. ", 6)
	ms := make([]llm.Message, 0, n)
	for i := range n {
		m := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("please look at main.go and fix the failing test " + strconv.Itoa(i))}}
		switch i % 3 {
		case 1:
			m = llm.Message{Role: llm.Assistant, Content: []llm.Content{llm.Text(answer),
				{Type: llm.ToolCallType, ID: "call_" + strconv.Itoa(i), Name: "read", Arguments: []byte(`{"path":"main.go"}`)}},
				Usage: &llm.Usage{Input: 10, Output: 3, TotalTokens: 13}, StopReason: llm.ToolUse}
		case 2:
			m = llm.Message{Role: llm.ToolResult, ToolCallID: "call_" + strconv.Itoa(i-1), ToolName: "read",
				Content: []llm.Content{llm.Text(strings.Repeat("package main\n\nfunc main() {}\n", 8))}}
		}
		m.Timestamp = int64(1700000000000 + i)
		ms = append(ms, m)
	}
	return ms
}

// BenchmarkTurn measures what one turn of a long session allocates, as a
// multiple of the request body it sends (the budget: 2×), against
// a loopback server that answers at once.
func BenchmarkTurn(b *testing.B) {
	answers := map[string]string{
		"completions": "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"anthropic": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	for _, api := range []string{"completions", "anthropic"} {
		b.Run(api+"/messages=50001", func(b *testing.B) {
			var body atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n, _ := io.Copy(io.Discard, r.Body)
				body.Store(n)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, answers[api])
			}))
			defer srv.Close()
			opts := llm.ClientOptions{BaseURL: srv.URL, APIKey: "k", Provider: api}
			var p llm.Provider = &openai.Completions{ClientOptions: opts}
			if api == "anthropic" {
				p = &anthropic.Client{ClientOptions: opts}
			}
			s, err := New(Config{Provider: p, Model: llm.Model{ID: "m", ContextWindow: 1 << 30, MaxTokens: 1000},
				Resume: &journal.Loaded{Messages: longContext(50001)}, NoAutoCompaction: true})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for b.Loop() {
				if err := s.Prompt(context.Background(), "go on", PromptOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(body.Load()), "body-bytes")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/float64(body.Load()), "alloc/body")
		})
	}
}
