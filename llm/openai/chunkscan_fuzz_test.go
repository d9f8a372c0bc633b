package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzChunkRepeat holds a stream's chunk decoder, which resumes after
// the bytes a chunk repeats of an earlier one (chunkDecoder), to reading
// every chunk whole (fastChunkView): the same answer, exactly, for each
// chunk of a sequence, and one encoding/json agrees with. The sequence is
// a, then b and c, which are a with a[k1:k2] replaced by mid and mid2
// (the content of a text chunk, when the cuts fall around it), then a
// again. A chunk the decoder refuses is decoded by encoding/json into the
// reused chunk, as chatParser.fill falls back, and the next chunk reuses
// what that left, as the parser's does.
func FuzzChunkRepeat(f *testing.F) {
	for _, a := range []string{
		benchChunks[1].data,
		strings.Replace(benchChunks[0].data, "OBFUS", "YafdRYS6Y8xr5", 1),
		`{"choices":[{"delta":{"content":"WORD"},"index":1}]}`,
		`{"choices":[{"index":2,"delta":{"content":"WORD"},"finish_reason":"stop"}],"usage":null}`,
		`{"choices":[{"finish_reason":"stop","index":0,"delta":{"content":"WORD"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD"}},{"index":1,"delta":{"content":"b"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD","refusal":"r"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD","reasoning":"\u00e9"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD","tool_calls":[]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD"}}],"usage":null,"choices":[]}`,
		`{"choices":[{"index":0,"delta":{"content":"WORD","content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"r","content":"WORD"}}]}`,
		` { "choices" : [ { "index" : 0 , "delta" : { "content" : "WORD" } } ] } `,
	} {
		k1 := strings.Index(a, "WORD")
		k2 := k1 + len("WORD")
		for _, mid := range [][2]string{{" word1", " w2"}, {`a\nb`, `\u00e9`}, {"", "\xff"}, {`x"}]}`, `y`}} {
			f.Add([]byte(a), uint16(k1), uint16(k2), []byte(mid[0]), []byte(mid[1]))
		}
	}
	// A reused choice's fields from the chunk before (refusal, reasoning,
	// tool calls, finish reason) are gone in the next.
	for _, a := range []string{
		`{"choices":[{"index":0,"delta":{"content":"WORD","refusal":"r","reasoning_content":"c","reasoning":"t","tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"stop"}]}`,
	} {
		f.Add([]byte(a), uint16(strings.Index(a, "WORD")), uint16(len(a)), []byte(`x"}}]}`), []byte(`y"}}]}`))
	}
	// A chunk the fast path refuses after the prefix was kept, then one
	// that resumes after it: what encoding/json decoded in between (fields
	// the fast path never sets, a second choice) is gone.
	text := `{"choices":[{"index":0,"delta":{"content":"WORD"}}]}`
	for _, refused := range []string{
		`x","reasoning_details":[{"text":"t"}]}}]}`,
		`x","refusal":"r"},"finish_reason":"stop"},{"index":1,"delta":{"reasoning_details":[]}}]}`,
		`x"}}],"usage":{"prompt_tokens":1},"error":{"message":"m"}}`,
		`x"}}]`, // not JSON
	} {
		f.Add([]byte(text), uint16(strings.Index(text, "WORD")), uint16(len(text)), []byte(refused), []byte(`y"}}]}`))
	}
	opts := cmp.Options{cmpopts.EquateEmpty()}
	f.Fuzz(func(t *testing.T, a []byte, k1, k2 uint16, mid, mid2 []byte) {
		lo, hi := min(int(k1), len(a)), min(int(k2), len(a))
		if lo > hi {
			lo, hi = hi, lo
		}
		splice := func(m []byte) []byte {
			return append(append(append([]byte(nil), a[:lo]...), m...), a[hi:]...)
		}
		var dec chunkDecoder
		var got, want chunk
		for n, data := range [][]byte{a, splice(mid), splice(mid2), a} {
			// Both reused, as chatParser.fill resets its chunk.
			want = chunk{Choices: want.Choices[:0]}
			got = chunk{Choices: got.Choices[:0]}
			var buf []byte
			wok := fastChunkView(data, &want, &buf)
			if gok := dec.decode(data, &got); gok != wok {
				t.Fatalf("chunk %d %q: decoded %v by the stream's decoder, %v whole", n, data, gok, wok)
			}
			if !wok {
				// Whatever encoding/json makes of it, or leaves when it
				// refuses it too: the parser's chunk holds that next.
				got = chunk{}
				_ = json.Unmarshal(data, &got)
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("chunk %d %q (-whole +stream):\n%s", n, data, diff)
			}
			var jc chunk
			if err := json.Unmarshal(data, &jc); err != nil {
				t.Fatalf("chunk %d %q decoded, encoding/json refuses it: %v", n, data, err)
			}
			if string(jc.Error) == "null" {
				jc.Error = nil
			}
			if diff := cmp.Diff(jc, got, opts); diff != "" {
				t.Fatalf("chunk %d %q (-json +stream):\n%s", n, data, diff)
			}
		}
	})
}
