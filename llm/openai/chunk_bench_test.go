package openai

import (
	"strconv"
	"strings"
	"testing"
)

// benchChunks are the text-delta chunks a stream is nearly made of: as
// OpenAI sends them (every field, 324 bytes) and as llmtest's fake LLM,
// which `rally bench` streams from, sends them. WORD is the streamed text;
// OBFUS is OpenAI's obfuscation, which differs from chunk to chunk.
var benchChunks = []struct{ name, data string }{
	{"openai", `{"id":"chatcmpl-CK0XC8ADYjWGumKgPucuZfGDaWNiZ","object":"chat.completion.chunk","created":1758884650,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_cbf1785567","choices":[{"index":0,"delta":{"content":"WORD"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"OBFUS"}`},
	{"llmtest", `{"id":"chatcmpl-0000000000000001","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini","system_fingerprint":"fp_llmtest","choices":[{"index":0,"delta":{"content":"WORD"},"logprobs":null,"finish_reason":null}]}`},
}

// BenchmarkChunkDecode is the decoding of text-delta chunks alone, ten
// words in turn: by a stream's decoder ("stream"), which resumes after
// the bytes the chunks repeat, and each chunk read whole ("whole").
func BenchmarkChunkDecode(b *testing.B) {
	for _, bc := range benchChunks {
		var data [10][]byte
		for i := range data {
			d := strings.Replace(bc.data, "WORD", " word"+strconv.Itoa(i), 1)
			data[i] = []byte(strings.Replace(d, "OBFUS", "YafdRYS6Y8x"+strings.Repeat("r", i), 1))
		}
		for _, mode := range []string{"stream", "whole"} {
			b.Run(bc.name+"/"+mode, func(b *testing.B) {
				var c chunk
				var dec chunkDecoder
				var buf []byte
				b.SetBytes(int64(len(data[0])))
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					d := data[n%10]
					c = chunk{Choices: c.Choices[:0]}
					ok := false
					if mode == "stream" {
						ok = dec.decode(d, &c)
					} else {
						ok = fastChunkView(d, &c, &buf)
					}
					if !ok || c.Choices[0].Delta.Content != " word"+strconv.Itoa(n%10) {
						b.Fatal("not decoded")
					}
					n++
				}
			})
		}
	}
}
