package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// benchStreams are realistic bodies of about 1 MB: an OpenAI Chat
// Completions stream of one-word deltas, and an Anthropic Messages stream
// with event names, pings and a long tool-call argument line.
func benchStreams() map[string][]byte {
	var oa, an bytes.Buffer
	for oa.Len() < 1<<20 {
		oa.WriteString(`data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n")
	}
	oa.WriteString("data: [DONE]\n\n")
	an.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\"}}\n\n")
	for i := 0; an.Len() < 1<<20; i++ {
		if i%50 == 0 {
			an.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		an.WriteString(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}` + "\n\n")
	}
	an.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" + strings.Repeat("x", 64<<10) + "\"}}\n\n")
	an.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return map[string][]byte{"openai": oa.Bytes(), "anthropic": an.Bytes()}
}

func BenchmarkDecode(b *testing.B) {
	for name, in := range benchStreams() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			r := bytes.NewReader(in)
			for b.Loop() {
				r.Reset(in)
				d := NewDecoder(r)
				n := 0
				for {
					e, err := d.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += len(e.Data)
				}
				if n == 0 {
					b.Fatal("no data")
				}
			}
		})
	}
}
