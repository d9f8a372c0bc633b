package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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

// TestChoiceFieldsCleared: every field of a choice, its delta's included,
// is cleared by clearChoice when it alone is set, and any but the index
// and the content makes onlyContent false, so a suffix that sets it is
// not kept. A field added to choice or delta fails here until both know
// it: else a reused choice would keep it from the chunk before, and a
// kept suffix would drop it.
func TestChoiceFieldsCleared(t *testing.T) {
	for _, f := range leafFields(reflect.TypeFor[choice](), nil, "") {
		t.Run(f.name, func(t *testing.T) {
			var ch choice
			setNonZero(t, reflect.ValueOf(&ch).Elem().FieldByIndex(f.index))
			content := f.name == "Index" || f.name == "Delta.Content"
			if got := onlyContent(&ch); got != content {
				t.Errorf("onlyContent with %s set = %v, want %v", f.name, got, content)
			}
			clearChoice(&ch, 0)
			if !reflect.ValueOf(ch).IsZero() {
				t.Errorf("clearChoice left %s set: %+v", f.name, ch)
			}
		})
	}
}

// TestChunkFieldsReadOnlyAsNull: the chunk decoder refuses a chunk whose
// fields other than its choices are anything but null, so a chunk it
// decodes leaves them as the caller's reset did, and neither resume nor
// noteSuffix looks at them. A field added to chunk, or one the decoder
// comes to read, fails here until they do.
func TestChunkFieldsReadOnlyAsNull(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[chunk]()) {
		if f.Name == "Choices" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			v := reflect.New(f.Type).Elem()
			setNonZero(t, v)
			val, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			data := fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"a"}}],%q:%s}`, key, val)
			var jc chunk
			if err := json.Unmarshal([]byte(data), &jc); err != nil || reflect.ValueOf(jc).FieldByIndex(f.Index).IsZero() {
				t.Fatalf("encoding/json does not set %s from %s (%v)", f.Name, data, err)
			}
			var c chunk
			if fastChunk([]byte(data), &c) {
				t.Errorf("the fast path decoded %s: resume and noteSuffix must handle %s", data, f.Name)
			}
		})
	}
}

// field is a field of a struct, nested structs' fields named by path.
type field struct {
	name  string
	index []int
}

// leafFields lists t's fields, and in place of a struct-typed field the
// fields of that struct: each a value a decoding may set alone.
func leafFields(t reflect.Type, index []int, prefix string) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		at := append(slices.Clone(index), i)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, leafFields(f.Type, at, prefix+f.Name+".")...)
			continue
		}
		out = append(out, field{prefix + f.Name, at})
	}
	return out
}

// setNonZero sets v to a value that is not its type's zero, one that
// encoding/json marshals, or fails for a kind it does not know.
func setNonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte("{}"))
			break
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Struct:
		for i := range v.NumField() {
			setNonZero(t, v.Field(i))
		}
	default:
		t.Fatalf("no non-zero value of kind %v for %v", v.Kind(), v.Type())
	}
}
