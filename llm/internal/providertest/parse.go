package providertest

import (
	"encoding/json"
	"github.com/rally-agent/rally/internal/proctest"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// Parse runs a client's parser over a response body in memory, with no
// HTTP in between.
type Parse func(body []byte) *llm.Stream

// Fuzz feeds arbitrary bytes to parse as the response body, seeded with
// the package's testdata/*.sse and seeds. The stream must end (done or
// error) within a bounded number of events, without a panic, and its
// message must hold together; check, if not nil, adds what the client
// itself promises of a message.
func Fuzz(f *testing.F, parse Parse, check func(*testing.T, *llm.Message), seeds ...string) {
	Seeds(f, seeds...)
	f.Fuzz(func(t *testing.T, body []byte) {
		s := parse(body)
		n := 0
		var last llm.Event
		for {
			e, err := s.Next()
			if err == io.EOF {
				break
			}
			if n++; n > 10*len(body)+10 {
				t.Fatalf("%d events from %d bytes", n, len(body))
			}
			last = e
		}
		m := s.Message()
		if last.Type != llm.EventDone && last.Type != llm.EventError {
			t.Fatalf("last event %q", last.Type)
		}
		if m.StopReason == "" || (m.StopReason == llm.Error) != (m.ErrorMessage != "") {
			t.Fatalf("stop %q error %q", m.StopReason, m.ErrorMessage)
		}
		for _, c := range m.ToolCalls() {
			// An object, or the text that did not parse kept as a string.
			if len(c.Arguments) == 0 || c.Arguments[0] != '{' && c.Arguments[0] != '"' || !json.Valid(c.Arguments) {
				t.Fatalf("tool call arguments %q", c.Arguments)
			}
		}
		if check != nil {
			check(t, m)
		}
	})
}

// Seeds adds the recorded transcripts of the package's testdata/*.sse to
// f's corpus, and the bodies given.
func Seeds(f *testing.F, bodies ...string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range bodies {
		f.Add([]byte(s))
	}
}

// Bench measures what one text delta costs, from SSE bytes to the event a
// caller reads, over body, a whole answer of deltas text deltas, and
// reports it as ns/delta; the other figures are for the whole answer.
func Bench(b *testing.B, body []byte, deltas int, parse Parse) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := proctest.CPUTime()
	for b.Loop() {
		s := parse(body)
		n := 0
		for {
			e, err := s.Next()
			if err != nil {
				break
			}
			if e.Type == llm.EventTextDelta {
				n++
			}
		}
		if n != deltas || s.Message().StopReason != llm.Stop {
			b.Fatalf("%d deltas, stop %q: %s", n, s.Message().StopReason, s.Message().ErrorMessage)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
	// The process's CPU time per delta, GC included: on a shared machine
	// the wall time above also measures the neighbours.
	b.ReportMetric(float64((proctest.CPUTime()-cpu0).Nanoseconds())/float64(b.N*deltas), "cpu-ns/delta")
}
