package openai

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// parseChat and parseResp run a parser over body with no HTTP in between.
func parseChat(body []byte) *llm.Stream {
	p := &chatParser{Call: &httpcall.Call{Provider: "openai"}, model: &llm.Model{}, dec: sse.NewDecoder(bytes.NewReader(body))}
	return llm.NewStream(llm.Message{Role: llm.Assistant}, p.fill, nil)
}

func parseResp(body []byte) *llm.Stream {
	p := &respParser{Call: &httpcall.Call{Provider: "openai"}, model: &llm.Model{}, dec: sse.NewDecoder(bytes.NewReader(body))}
	return llm.NewStream(llm.Message{Role: llm.Assistant}, p.fill, nil)
}

// deltas is how many text deltas a benchmark stream has: a long answer.
const deltas = 1000

// chatBench is a Chat Completions stream of n deltas shaped like OpenAI's
// own chunks, with every field it sends.
func chatBench(n int) []byte {
	var b bytes.Buffer
	head := `data: {"id":"chatcmpl-CK0XC8ADYjWGumKgPucuZfGDaWNiZ","object":"chat.completion.chunk","created":1758884650,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_cbf1785567","choices":[{"index":0,"delta":{"content":`
	for i := range n {
		fmt.Fprintf(&b, "%s\" word%d\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"YafdRYS6Y8xr5\"}\n\n", head, i%10)
	}
	b.WriteString(chatStream(finishChunk("stop"), `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, "[DONE]"))
	return b.Bytes()
}

// respBench is a Responses stream of n deltas shaped like OpenAI's.
func respBench(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"content_index\":0,\"delta\":\" word%d\",\"item_id\":\"msg_0f9c4b2f224d858000695fa063d4708197af73c2f37cb0b9d3\",\"logprobs\":[],\"obfuscation\":\"N16SG5UiLncOU\",\"output_index\":0,\"sequence_number\":%d}\n\n", i%10, i+4)
	}
	b.WriteString(respStream(respCompleted))
	return b.Bytes()
}

func BenchmarkCompletionsDelta(b *testing.B) {
	providertest.Bench(b, chatBench(deltas), deltas, parseChat)
}

func BenchmarkResponsesDelta(b *testing.B) {
	providertest.Bench(b, respBench(deltas), deltas, parseResp)
}
