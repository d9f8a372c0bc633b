package gemini

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// FuzzParse feeds arbitrary bytes to the parser as the response body. The
// stream must end (done or error), without a panic, and its message must
// hold together.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(textBody("a", "b")))
	f.Add([]byte(chunkOf(thought("t")+","+call("f", `{"a":[1]}`, "id1", "s")+","+text("x"), "STOP", []int{1, 2, 3, 4})))
	f.Add([]byte(data(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`)))
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
			if c.ID == "" || len(c.Arguments) == 0 || c.Arguments[0] != '{' {
				t.Fatalf("tool call %+v", c)
			}
		}
	})
}
