package sse

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// refDecode is a second, deliberately naive decoder written straight from
// the standard (plus rally's two documented departures), for differential
// fuzzing: it splits the whole input into lines first, then applies the field
// rules, sharing no code with Decoder.
func refDecode(in []byte) []ev {
	s := strings.TrimPrefix(string(in), "\uFEFF")
	var lines []string
	for s != "" {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if strings.HasPrefix(s[i:], "\r\n") {
			i++
		}
		s = s[i+1:]
	}
	var out []ev
	var data []string
	var name, id string
	named := false
	dispatch := func() {
		if data != nil || named {
			out = append(out, ev{name, strings.Join(data, "\n"), id})
		}
		data, name, named = nil, "", false
	}
	for _, l := range lines {
		if l == "" {
			dispatch()
			continue
		}
		if strings.HasPrefix(l, ":") {
			continue
		}
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data = append(data, value)
		case "event":
			name, named = value, true
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	dispatch() // rally dispatches what is pending at the end of input
	return out
}

// chunkReader returns its input in reads of varying sizes, cycling through
// sizes, so line ends fall on every kind of read boundary.
type chunkReader struct {
	b     []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(c.sizes[c.i%len(c.sizes)], len(p), len(c.b))
	c.i++
	n = copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// FuzzDecoder checks that the decoder terminates without panicking on any
// input, that read boundaries never change what it yields, and that it agrees
// with refDecode. Run it with
//
//	go test -run '^$' -fuzz FuzzDecoder -fuzztime 30s -fuzzminimizetime 5s ./internal/sse/
//
// The minimise-time cap matters: Go minimises every new input in time
// quadratic in its size, which otherwise pauses the run for up to a minute
// at a time.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		"",
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"event: message_start\r\ndata: {}\r\n\r\n: ping\r\n\r\n",
		": OPENROUTER PROCESSING\n\ndata: x\n\n",
		"data: a\rdata: b\r\rid: 1\revent: e\r\r",
		"data: a\r\r\n\r\ndata\n\nevent\n\nid\x00\n\n",
		"\xEF\xBB\xBFdata:  x\nretry: 1\nfoo\n\n",
		"{\n  \"error\": {\"code\": 503}\n}",
		"data: [DONE]",
		"data: a\r",
		"event: error\n\n",
	} {
		f.Add([]byte(s), []byte{3, 0, 17})
	}
	files, _ := filepath.Glob("/work/shared/reference-wire/*.sse")
	for _, p := range files {
		// In-memory seeds only, never copied into testdata. Only the
		// head of each, which shows its framing: the fuzzer minimises
		// every new input, and inputs of kilobytes stall it for a minute.
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), 384)], []byte{byte(len(b)), 1})
		}
	}
	// cuts sets the sizes of the chunked reads, one byte each; a byte
	// slice rather than an integer, as the fuzzer minimises integers by
	// trying every smaller value, which stalls it.
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		want := refDecode(in)
		sizes := []int{7}
		for i, c := range cuts {
			if i == 0 {
				sizes = sizes[:0]
			}
			sizes = append(sizes, 1+int(c))
		}
		for how, r := range map[string]io.Reader{
			"whole":   &chunkReader{b: in, sizes: []int{len(in) + 1}},
			"onebyte": iotest.OneByteReader(&chunkReader{b: in, sizes: []int{len(in) + 1}}),
			"chunked": &chunkReader{b: in, sizes: sizes},
		} {
			got, err := collect(r)
			if err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: input %q\ngot  %q\nwant %q", how, in, got, want)
			}
		}
	})
}
