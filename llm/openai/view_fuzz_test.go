package openai

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rally-agent/rally/llm"
)

// dirty is a chunk with escaped text in every field that is read as a view,
// decoded before the input under test so that the reused chunk and scratch
// buffer hold something to be overwritten, as in a parser mid-stream.
const dirty = `{"choices":[{"index":0,"delta":{"content":"\u00e9\n\"x\"","refusal":"\t\\","reasoning_content":"r\u00e8","reasoning":"\ud83d\ude00"},"finish_reason":null},{"index":1,"delta":{"content":"y"}}]}`

// FuzzFastChunkView holds the parser's zero-copy decoding (text as views
// of the input or of a reused scratch buffer, into a reused chunk) to
// encoding/json's answer for the same bytes, read while the views are
// valid; and the text must survive the input being overwritten once it is
// copied, as the llm.Builder does.
func FuzzFastChunkView(f *testing.F) {
	for _, s := range []string{
		dirty,
		`{"choices":[{"index":0,"delta":{"content":"plain"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a\nb","reasoning_content":"\u00e9"}}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`,
		`{"choices":[]}`,
		`{"choices":null}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}",
	} {
		f.Add([]byte(s))
	}
	opts := cmp.Options{cmpopts.EquateEmpty(), cmp.AllowUnexported()}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c chunk
		var buf []byte
		if !fastChunkView([]byte(dirty), &c, &buf) {
			t.Fatal("the dirty seed takes the slow path")
		}
		in := bytes.Clone(data)
		c = chunk{Choices: c.Choices[:0]} // as chatParser.fill resets it
		if !fastChunkView(in, &c, &buf) {
			return
		}
		var jc chunk
		if err := json.Unmarshal(data, &jc); err != nil {
			t.Fatalf("fast chunk accepted what encoding/json refuses (%v): %q", err, data)
		}
		if string(jc.Error) == "null" {
			jc.Error = nil
		}
		if diff := cmp.Diff(jc, c, opts); diff != "" {
			t.Fatalf("chunk %q (-json +view):\n%s", data, diff)
		}
		// What the Builder makes of the views (the block's text and each
		// event's delta) outlives the input and the buffer.
		var want []string
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				want = append(want, strings.Clone(ch.Delta.Content))
			}
		}
		filled := false
		st := llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
			if !filled {
				for _, ch := range c.Choices {
					b.Text("0", ch.Delta.Content)
				}
				filled = true
			}
			b.Finish(llm.Stop)
			return nil
		}, nil)
		var deltas []string
		for {
			e, err := st.Next()
			if err != nil {
				break
			}
			if e.Type == llm.EventTextDelta {
				deltas = append(deltas, e.Delta)
			}
		}
		for i := range in {
			in[i] = 'X'
		}
		for i := range buf {
			buf[i] = 'X'
		}
		if !slices.Equal(deltas, want) {
			t.Fatalf("deltas after the input was overwritten: %q, want %q", deltas, want)
		}
		if got := st.Message().TextOf(); got != strings.Join(want, "") {
			t.Fatalf("text after the input was overwritten: %q, want %q", got, strings.Join(want, ""))
		}
	})
}
