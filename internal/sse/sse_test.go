package sse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// ev is an Event with its Data copied, for comparing whole streams.
type ev struct {
	Name, Data, ID string
}

// collect decodes r to the end and returns the events and the error that
// ended it (nil for io.EOF).
func collect(r io.Reader) ([]ev, error) {
	d := NewDecoder(r)
	var out []ev
	for {
		e, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data), e.ID})
		if len(out) > 1<<20 {
			return out, errors.New("runaway decoder")
		}
	}
}

// drain decodes d until an error, which it returns (io.EOF included) with
// the events before it.
func drain(d *Decoder) ([]ev, error) {
	var out []ev
	for {
		e, err := d.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data), e.ID})
	}
}

// readers returns the ways each test input is fed to the decoder: whole, a
// byte at a time, in halves, and with the error on the last data read.
func readers(in string) map[string]io.Reader {
	return map[string]io.Reader{
		"whole":   strings.NewReader(in),
		"onebyte": iotest.OneByteReader(strings.NewReader(in)),
		"half":    iotest.HalfReader(strings.NewReader(in)),
		"dataerr": iotest.DataErrReader(strings.NewReader(in)),
	}
}

func TestDecode(t *testing.T) {
	big := strings.Repeat(`{"arguments":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, 60000) // ~3.4 MB
	var many strings.Builder                                                                   // more names than the decoder caches
	var manyWant []ev
	for i := range 3 * maxNames {
		name := fmt.Sprintf("n%d", i%(2*maxNames))
		fmt.Fprintf(&many, "event: %s\ndata: %d\n\n", name, i)
		manyWant = append(manyWant, ev{Name: name, Data: fmt.Sprint(i)})
	}
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"many names", many.String(), manyWant},
		{"empty", "", nil},
		{"blank lines only", "\n\n\r\n\r\r", nil},
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			[]ev{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"anthropic", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			[]ev{{Name: "message_start", Data: "{}"}, {Name: "ping", Data: `{"type": "ping"}`}}},
		{"name after data", "data: x\nevent: e\n\n", []ev{{Name: "e", Data: "x"}}},
		{"last name wins", "event: a\nevent: b\ndata: x\n\n", []ev{{Name: "b", Data: "x"}}},
		{"name reset between events", "event: a\ndata: 1\n\ndata: 2\n\n",
			[]ev{{Name: "a", Data: "1"}, {Data: "2"}}},
		{"comment", ": OPENROUTER PROCESSING\n\ndata: x\n: mid-event comment\n\n",
			[]ev{{Data: "x"}}},
		{"comment only", ": keep-alive\n\n:\n\n", nil},
		{"multi-line data", "data: a\ndata: b\ndata:\ndata: c\n\n", []ev{{Data: "a\nb\n\nc"}}},
		{"no space after colon", "data:x\n\n", []ev{{Data: "x"}}},
		{"only one space dropped", "data:  x \n\n", []ev{{Data: " x "}}},
		{"colon in value", "data: a: b:c\n\n", []ev{{Data: "a: b:c"}}},
		{"empty data", "data:\n\n", []ev{{}}},
		{"field without colon", "data\ndata\n\n", []ev{{Data: "\n"}}},
		{"event without colon", "event\ndata: x\n\n", []ev{{Data: "x"}}},
		{"case-sensitive fields", "Data: x\nDATA: y\n\n", nil},
		{"leading space is not a field", " data: x\n\n", nil},
		{"unknown field", "foo: bar\ndata: x\n\n", []ev{{Data: "x"}}},
		{"retry ignored", "retry: 3000\n\nretry: x\ndata: y\n\n", []ev{{Data: "y"}}},
		{"crlf", "event: e\r\ndata: a\r\ndata: b\r\n\r\n", []ev{{Name: "e", Data: "a\nb"}}},
		{"lone cr", "event: e\rdata: a\rdata: b\r\rdata: c\r\r", []ev{{Name: "e", Data: "a\nb"}, {Data: "c"}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []ev{{Data: "a\nb\nc"}}},
		{"cr cr lf", "data: a\r\r\n", []ev{{Data: "a"}}},
		{"bom", "\xEF\xBB\xBFdata: x\n\n", []ev{{Data: "x"}}},
		{"bom only once", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", []ev{{Data: "y"}}},
		{"bom not at start", "data: x\n\n\xEF\xBB\xBFdata: y\n\n", []ev{{Data: "x"}}},
		{"bom on comment", "\xEF\xBB\xBF: hi\n\ndata: x\n\n", []ev{{Data: "x"}}},
		{"id", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			[]ev{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}, {Data: "c"}}},
		{"id alone is not an event", "id: 7\n\ndata: a\n\n", []ev{{Data: "a", ID: "7"}}},
		{"id with NUL ignored", "id: 1\n\nid: 2\x003\ndata: a\n\n", []ev{{Data: "a", ID: "1"}}},
		{"name without data", "event: error\n\ndata: x\n\n", []ev{{Name: "error"}, {Data: "x"}}},
		{"empty name without data", "event:\n\n", []ev{{}}},
		{"eof after data line", "data: a\n", []ev{{Data: "a"}}},
		{"eof mid line", "data: [DONE]", []ev{{Data: "[DONE]"}}},
		{"eof mid event", "data: a\n\ndata: b\ndata: c", []ev{{Data: "a"}, {Data: "b\nc"}}},
		{"eof after name", "data: a\n\nevent: x", []ev{{Data: "a"}, {Name: "x"}}},
		{"eof after comment", "data: a\n\n: bye", []ev{{Data: "a"}}},
		{"eof after id", "data: a\n\nid: 9", []ev{{Data: "a"}}},
		{"eof after cr", "data: a\r", []ev{{Data: "a"}}},
		{"json error body", "{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"The model is overloaded.\",\n    \"status\": \"UNAVAILABLE\"\n  }\n}\n", nil},
		{"json on one line", `{"error":{"type":"invalid_request_error","message":"bad"}}`, nil},
		{"html body", "<html>\r\n<body>502 Bad Gateway</body>\r\n</html>", nil},
		{"nul and binary", "data: \x00\xff\xfe\n\n", []ev{{Data: "\x00\xff\xfe"}}},
		{"huge line", "data: " + big + "\n\ndata: next\n\n", []ev{{Data: big}, {Data: "next"}}},
		{"huge line at eof", "data: " + big, []ev{{Data: big}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for how, r := range readers(tt.in) {
				got, err := collect(r)
				if err != nil {
					t.Fatalf("%s: error %v", how, err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s: got %.1000q\nwant %.1000q", how, got, tt.want)
				}
			}
		})
	}
}

// errReader yields its input and then fails with err.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = e.err
	}
	return n, err
}

// zeroReader returns (0, nil) forever, which io.Reader discourages.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// badReader claims to have read more than it was given.
type badReader struct{}

func (badReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestErrors(t *testing.T) {
	cut := io.ErrUnexpectedEOF
	tests := []struct {
		name string
		r    io.Reader
		want []ev
		err  error
	}{
		{"error after events", &errReader{strings.NewReader("data: a\n\n"), cut}, []ev{{Data: "a"}}, cut},
		{"error mid event drops it", &errReader{strings.NewReader("data: a\n\ndata: b\n"), cut}, []ev{{Data: "a"}}, cut},
		{"error mid line", &errReader{strings.NewReader("data: a\n\ndata: {\"x"), cut}, []ev{{Data: "a"}}, cut},
		{"timeout", iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n")), []ev{{Data: "a"}}, iotest.ErrTimeout},
		{"no progress", zeroReader{}, nil, io.ErrNoProgress},
		{"bad count", badReader{}, nil, errBadReader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(tt.r)
			got, err := drain(d)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if _, again := d.Next(); again != err {
				t.Errorf("error not sticky: then %v, now %v", err, again)
			}
		})
	}
	t.Run("eof is sticky", func(t *testing.T) {
		d := NewDecoder(strings.NewReader("data: [DONE]"))
		if e, err := d.Next(); err != nil || string(e.Data) != "[DONE]" {
			t.Fatalf("got %q, %v", e.Data, err)
		}
		for range 3 {
			if _, err := d.Next(); err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
		}
	})
}

// TestLive checks that an event is delivered as soon as its blank line
// arrives, whatever the line ends, without waiting for more input.
func TestLive(t *testing.T) {
	for _, end := range []string{"\n", "\r\n", "\r"} {
		t.Run(strings.NewReplacer("\r", "CR", "\n", "LF").Replace(end), func(t *testing.T) {
			pr, pw := io.Pipe()
			next := make(chan bool)
			go func() {
				// Writes rarely align with events: the first carries the
				// start of the second event too.
				_, _ = pw.Write([]byte("data: one" + end + end + "data: tw"))
				<-next
				_, _ = pw.Write([]byte("o" + end + end))
				pw.Close()
			}()
			d := NewDecoder(pr)
			for i, want := range []string{"one", "two"} {
				got := make(chan string, 1)
				go func() {
					e, err := d.Next()
					if err != nil {
						got <- err.Error()
					}
					got <- string(e.Data)
				}()
				select {
				case s := <-got:
					if s != want {
						t.Fatalf("event %d: got %q, want %q", i, s, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("event %d not delivered before more input", i)
				}
				if i == 0 {
					next <- true
				}
			}
			if _, err := d.Next(); err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
		})
	}
}

// TestReferenceWire decodes the real provider transcripts in
// /work/shared/reference-wire, which the project may read but must not copy.
// Each must decode without error, with as many events as an independent count
// of blocks holding a data line, and every data payload must be JSON or
// [DONE].
func TestReferenceWire(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/reference-wire/*.sse")
	if len(files) == 0 {
		t.Skip("reference transcripts not present")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := countEvents(raw)
			t.Logf("%d events", want)
			for how, r := range readers(string(raw)) {
				got, err := collect(r)
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if len(got) != want {
					t.Errorf("%s: %d events, independent count %d", how, len(got), want)
				}
				// vLLM ends with "data: [DONE]" and no newline: it must
				// still arrive, as the last event.
				if strings.Contains(string(raw), "data: [DONE]") && got[len(got)-1].Data != "[DONE]" {
					t.Errorf("%s: last event %.100q, want [DONE]", how, got[len(got)-1].Data)
				}
				for i, e := range got {
					if e.Data != "[DONE]" && !jsonValid(e.Data) {
						t.Errorf("%s: event %d data is not JSON: %.200q", how, i, e.Data)
					}
				}
			}
		})
	}
}

// countEvents counts SSE events the simple way: normalise line ends, split
// at blank lines, count blocks with a line starting "data:".
func countEvents(b []byte) int {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	n := 0
	for block := range strings.SplitSeq(s, "\n\n") {
		for l := range strings.SplitSeq(block, "\n") {
			if strings.HasPrefix(l, "data:") {
				n++
				break
			}
		}
	}
	return n
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
