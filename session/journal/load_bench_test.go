package journal

import (
	"fmt"
	"github.com/rally-agent/rally/internal/proctest"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/rally-agent/rally/llm"
)

// longSession writes a session of n messages shaped like a coding
// session's (a prompt, an answer with a tool call, its result, …) and
// returns its path.
func longSession(tb testing.TB, n int) string {
	tb.Helper()
	j, err := Create(tb.TempDir(), "/p")
	if err != nil {
		tb.Fatal(err)
	}
	defer j.Close()
	answer := strings.Repeat("Some answer text of a typical length, with \"quotes\" and a\nnewline. ", 6)
	for i := range n {
		var m llm.Message
		switch i % 3 {
		case 0:
			m = jUser(fmt.Sprintf("prompt %d: please look at main.go and fix the failing test", i), int64(1700000000000+i))
		case 1:
			m = jAssistant(answer, int64(1700000000000+i))
			m.Content = append(m.Content, llm.Content{Type: llm.ToolCallType, ID: fmt.Sprint("call_", i), Name: "read", Arguments: []byte(`{"path":"main.go","limit":200}`)})
			m.StopReason = llm.ToolUse
		default:
			m = llm.Message{Role: llm.ToolResult, ToolCallID: fmt.Sprint("call_", i-1), ToolName: "read",
				Content: []llm.Content{llm.Text(strings.Repeat("package main\n\nfunc main() {}\n", 8))}, Timestamp: int64(1700000000000 + i)}
		}
		if _, err := j.AppendMessage(m, false); err != nil {
			tb.Fatal(err)
		}
	}
	return j.Path()
}

// ownSize is the memory the messages themselves need: their structs,
// blocks, usage and the bytes of their strings.
func ownSize(ms []llm.Message) int {
	n := 0
	for i := range ms {
		m := &ms[i]
		n += int(unsafe.Sizeof(*m)) + len(m.API) + len(m.Provider) + len(m.Model) + len(m.ErrorMessage) + len(m.ToolCallID) + len(m.ToolName) + len(m.StopReason) + len(m.Role)
		if m.Usage != nil {
			n += int(unsafe.Sizeof(*m.Usage))
		}
		for _, c := range m.Content {
			n += int(unsafe.Sizeof(c)) + len(c.Type) + len(c.Text) + len(c.Thinking) + len(c.ThinkingSignature) + len(c.Data) + len(c.MimeType) + len(c.ID) + len(c.Name) + len(c.Arguments) + len(c.ThoughtSignature)
		}
	}
	return n
}

// BenchmarkLoad measures reading a long session file: throughput
// (MB/s), and the heap it holds afterwards as a multiple of the
// messages' own size (retained-x; the budget is 2) and of the file
// (retained/file).
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprint("messages=", n), func(b *testing.B) {
			path := longSession(b, n)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			var ld *Loaded
			cpu0 := proctest.CPUTime()
			for b.Loop() {
				ld, err = Load(path)
				if err != nil || len(ld.Messages) != n {
					b.Fatalf("%v, %d messages", err, len(ld.Messages))
				}
			}
			b.StopTimer()
			// On a shared machine the wall time measures the neighbours;
			// the process's CPU time (GC included) measures the load.
			b.ReportMetric(float64(st.Size())*float64(b.N)/(proctest.CPUTime()-cpu0).Seconds()/1e6, "MB/s-cpu")
			var ms runtime.MemStats
			ld = nil
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			ld, _ = Load(path)
			runtime.GC()
			runtime.ReadMemStats(&ms)
			held := float64(ms.HeapAlloc - before)
			b.ReportMetric(held/float64(ownSize(ld.Messages)), "retained-x")
			b.ReportMetric(held/float64(st.Size()), "retained/file")
			runtime.KeepAlive(ld)
		})
	}
}
