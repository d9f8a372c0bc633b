package openai

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/sse"
)

// TestTextDeltaParsingAllocs: once a stream's buffers have grown, reading
// a text chunk's event and decoding it allocates nothing, escaped text
// included, for chunks shaped as OpenAI's (an obfuscation that differs
// from chunk to chunk) and as llmtest's.
func TestTextDeltaParsingAllocs(t *testing.T) {
	for _, bc := range benchChunks {
		t.Run(bc.name, func(t *testing.T) {
			var body bytes.Buffer
			for i := range 8000 {
				text := fmt.Sprintf(" word%d", i%10)
				if i%3 == 0 {
					text = `\"quoted\"\n\u00e9`
				}
				d := strings.Replace(bc.data, "WORD", text, 1)
				fmt.Fprintf(&body, "data: %s\n\n", strings.Replace(d, "OBFUS", strings.Repeat("x", i%7), 1))
			}
			dec := sse.NewDecoder(&body)
			var chunks chunkDecoder
			var c chunk
			read := func(n int) {
				for range n {
					ev, err := dec.Next()
					c = chunk{Choices: c.Choices[:0]}
					if err != nil || !chunks.decode(ev.Data, &c) || len(c.Choices) != 1 || c.Choices[0].Delta.Content == "" {
						t.Fatalf("event %q (%v) not decoded as a text delta: %+v", ev.Data, err, c)
					}
				}
			}
			read(500)
			if n := testing.AllocsPerRun(5, func() { read(1000) }); n != 0 {
				t.Errorf("%v allocations per 1,000 text deltas, want 0", n)
			}
		})
	}
}

// TestChunkDecoderResumes: after a stream's first text chunk the decoder
// keeps the bytes up to its content (the prefix it resumes after) and the
// bytes after it (the suffix a chunk that repeats them ends on), and drops
// the suffix once a chunk with the prefix does not end with it, as
// OpenAI's never do (their obfuscation differs): without this, a decoder
// that never resumed would pass every test that compares its results
// with a whole read, and one that copied a missed suffix again on every
// chunk too.
func TestChunkDecoderResumes(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		suffix     bool // the suffix is kept after three chunks
	}{
		{"openai", benchChunks[0].data, false},
		{"llmtest", benchChunks[1].data, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d chunkDecoder
			for i, word := range []string{"one", "two", "three"} {
				in := strings.NewReplacer("WORD", word, "OBFUS", strings.Repeat("x", i+1)).Replace(tc.data)
				var c chunk
				if !d.decode([]byte(in), &c) || len(c.Choices) != 1 || c.Choices[0].Delta.Content != word {
					t.Fatalf("chunk %d: %+v", i, c)
				}
				if i == 0 && !strings.HasPrefix(string(d.suffix), `},"logprobs":null`) {
					t.Errorf("suffix %q after the first chunk, want the bytes after the content", d.suffix)
				}
			}
			if !strings.HasSuffix(string(d.prefix), `"content":"`) {
				t.Errorf("prefix %q, want the bytes up to the content", d.prefix)
			}
			if kept := len(d.suffix) > 0; kept != tc.suffix {
				t.Errorf("suffix %q kept: %v, want %v", d.suffix, kept, tc.suffix)
			}
		})
	}
}
