package openai

import "testing"

// benchChunks are the text-delta chunks a stream is nearly made of: as
// OpenAI sends them (every field, 324 bytes) and as llmtest's fake LLM,
// which `rally bench` streams from, sends them.
var benchChunks = []struct{ name, data string }{
	{"openai", `{"id":"chatcmpl-CK0XC8ADYjWGumKgPucuZfGDaWNiZ","object":"chat.completion.chunk","created":1758884650,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_cbf1785567","choices":[{"index":0,"delta":{"content":" word7"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"YafdRYS6Y8xr5"}`},
	{"llmtest", `{"id":"chatcmpl-0000000000000001","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini","system_fingerprint":"fp_llmtest","choices":[{"index":0,"delta":{"content":" word7"},"logprobs":null,"finish_reason":null}]}`},
}

// BenchmarkChunkDecode is the decoding of one text-delta chunk alone.
func BenchmarkChunkDecode(b *testing.B) {
	for _, bc := range benchChunks {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.data)
			var c chunk
			var buf []byte
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				c = chunk{Choices: c.Choices[:0]}
				if !fastChunkView(data, &c, &buf) || c.Choices[0].Delta.Content != " word7" {
					b.Fatal("not decoded")
				}
			}
		})
	}
}
