package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// piece is one call on the builder of a scripted stream.
type piece struct {
	kind  string // "text", "thinking", "tool", "end"
	key   string
	delta string
}

// streamEvents runs a scripted stream and returns its session events as
// the session emits them: message_start, a message_update per stream
// event (each with a snapshot of the message), message_end.
func streamEvents(t testing.TB, pieces []piece) []session.Event {
	t.Helper()
	i := 0
	s := llm.NewStream(llm.Message{Role: llm.Assistant, API: "sim", Provider: "sim", Model: "m", Timestamp: 7}, func(b *llm.Builder) error {
		if i == len(pieces) {
			b.Finish(llm.Stop)
			return io.EOF
		}
		p := pieces[i]
		i++
		switch p.kind {
		case "text":
			b.Text(p.key, p.delta)
		case "thinking":
			b.Thinking(p.key, p.delta)
		case "tool":
			b.ToolCall(p.key, "call_"+p.key, "read", p.delta)
		case "end":
			b.End(p.key)
		}
		return nil
	}, nil)
	var out []session.Event
	for {
		e, err := s.Next()
		if err == io.EOF {
			return out
		}
		m := e.Partial.Clone()
		switch e.Type {
		case llm.EventStart:
			out = append(out, session.MessageStartEvent{Message: m})
		case llm.EventDone, llm.EventError:
			out = append(out, session.MessageEndEvent{Message: m})
		default:
			a := e
			a.Partial = m
			out = append(out, session.MessageUpdateEvent{Message: m, Assistant: &a})
		}
	}
}

var streams = []struct {
	name   string
	pieces []piece
}{
	{"text", []piece{{"text", "0", "Hello"}, {"text", "0", ", "}, {"text", "0", "world"}}},
	{"escapes", []piece{{"text", "0", "a\"b\\"}, {"text", "0", "\n<&>\t"}, {"text", "0", "\u2028x\u2029"}}},
	// A rune split across deltas, and bytes that are not UTF-8 at all:
	// the cache must not escape the halves apart.
	{"split runes", []piece{{"text", "0", "caf\xc3"}, {"text", "0", "\xa9 \xe2\x80"}, {"text", "0", "\xa8!"}, {"text", "0", "\xff\xfe"}, {"text", "0", "ok"}}},
	{"blocks", []piece{{"thinking", "t", "let me "}, {"thinking", "t", "think"}, {"end", "t", ""},
		{"text", "0", "I will read it."}, {"end", "0", ""}, {"tool", "1", `{"pa`}, {"tool", "1", `th":"a.go"}`}, {"end", "1", ""},
		{"text", "2", "done"}}},
}

// TestEncoderDefaultForm: the encoder's reuse of escaped text changes no
// byte of any line.
func TestEncoderDefaultForm(t *testing.T) {
	for _, tc := range streams {
		t.Run(tc.name, func(t *testing.T) {
			var enc Encoder
			for i, e := range streamEvents(t, tc.pieces) {
				want := AppendEvent(nil, e)
				if got := enc.Encode(e); !bytes.Equal(got, want) {
					t.Fatalf("event %d (%s):\n got %s\nwant %s", i, e.Kind(), got, want)
				}
			}
		})
	}
}

// TestDeltaForm: delta-only lines carry no message, and a Decoder rebuilds
// from them the events the default form carries.
func TestDeltaForm(t *testing.T) {
	for _, tc := range streams {
		if !validDeltas(tc.pieces) {
			// Each delta is a JSON string of its own, so a rune split
			// between two is lost; providers' deltas are decoded JSON
			// strings, valid UTF-8 always.
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			enc := Encoder{Deltas: true}
			var dec, full Decoder
			for i, e := range streamEvents(t, tc.pieces) {
				line := enc.Encode(e)
				u, isUpdate := e.(session.MessageUpdateEvent)
				if isUpdate && (bytes.Contains(line, []byte(`"partial"`)) || bytes.Contains(line, []byte(`"message"`))) {
					t.Fatalf("event %d: delta line carries the message: %s", i, line)
				}
				if !json.Valid(line) {
					t.Fatalf("event %d: invalid JSON %s", i, line)
				}
				got, err := dec.Decode(line)
				if err != nil {
					t.Fatal(err)
				}
				want, err := full.Decode(AppendEvent(nil, e))
				if err != nil {
					t.Fatal(err)
				}
				if isUpdate && strings.HasSuffix(string(u.Assistant.Type), "_start") {
					// A start's partial in the default form already holds
					// the deltas the provider sent with it (the stream
					// queues both before the session snapshots); the
					// rebuilt one holds what the start itself added.
					w := want.(session.MessageUpdateEvent)
					w.Message.Content[u.Assistant.ContentIndex].Text = ""
					w.Message.Content[u.Assistant.ContentIndex].Thinking = ""
				}
				if isUpdate {
					// Likewise the stop reason of the last block's end.
					want.(session.MessageUpdateEvent).Message.StopReason = got.(session.MessageUpdateEvent).Message.StopReason
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("event %d (%s):\n got %+v\nwant %+v", i, e.Kind(), got, want)
				}
			}
		})
	}
}

func validDeltas(ps []piece) bool {
	for _, p := range ps {
		if !utf8.ValidString(p.delta) {
			return false
		}
	}
	return true
}

// TestDeltaLinesAreFlat: a delta line's length does not grow with the
// answer, while a default line's does.
func TestDeltaLinesAreFlat(t *testing.T) {
	var pieces []piece
	for range 2000 {
		pieces = append(pieces, piece{"text", "0", "word "})
	}
	es := streamEvents(t, pieces)
	full, delta := Encoder{}, Encoder{Deltas: true}
	first, last := es[2], es[len(es)-3] // the first and last text_delta
	if a, b := len(delta.Encode(first)), len(delta.Encode(last)); a != b {
		t.Errorf("delta lines: %d bytes at the first delta, %d at the last", a, b)
	}
	if a, b := len(full.Encode(first)), len(full.Encode(last)); b < a+2*len("word ")*1900 {
		t.Errorf("default lines: %d bytes at the first delta, %d at the last; want the partial twice", a, b)
	}
}

func FuzzEncoderCache(f *testing.F) {
	f.Add("caf\xc3", "\xa9\u2028", "x\"")
	f.Add("\xe2", "\x80", "\xa8")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var ct cachedText
		for _, s := range []string{a, a + b, a + b + c, c} {
			got := string(ct.opt(nil, "", s))
			if want := string(optString(nil, "", s)); got != want {
				t.Fatalf("%q: got %s want %s", s, got, want)
			}
		}
	})
}

func BenchmarkEncoder(b *testing.B) {
	for _, words := range []int{100, 1000, 10000} {
		var pieces []piece
		for range words {
			pieces = append(pieces, piece{"text", "0", "word "})
		}
		es := streamEvents(b, pieces)
		for _, mode := range []struct {
			name  string
			delta bool
		}{{name: "append-event"}, {name: "default"}, {name: "deltas", delta: true}} {
			b.Run(mode.name+"/words="+strconv.Itoa(words), func(b *testing.B) {
				enc := Encoder{Deltas: mode.delta}
				var buf []byte
				n := 0
				for b.Loop() {
					for _, e := range es {
						if mode.name == "append-event" {
							buf = AppendEvent(buf[:0], e)
						} else {
							buf = enc.Encode(e)
						}
						n += len(buf)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/event")
				b.ReportMetric(float64(n)/float64(b.N*len(es)), "bytes/event")
			})
		}
	}
}
