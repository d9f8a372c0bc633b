package rpc

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
)

// BenchmarkDeltaPath is the whole path of a streamed delta in one
// process, as `rally --mode rpc` runs it: the fake LLM's answer over
// loopback HTTP (served in one write), the Chat Completions parser, the
// agent loop, the session's fan-out to the RPC server's subscription, the
// wire encoding in delta-only form and the output's writes. It reports the
// process's CPU per delta (GC and the one write of the fake LLM included:
// the wall time of a shared machine measures the neighbours too),
// allocations and bytes per delta, and writes of the output per 1,000
// deltas. Issue 25's target: ≤ 1 µs CPU and 0 allocations per delta.
func BenchmarkDeltaPath(b *testing.B) {
	for _, words := range []int{1000, 10000, 50000} {
		b.Run("words="+strconv.Itoa(words), func(b *testing.B) {
			url := bulkServer(b, llmtest.Step{Text: strings.TrimSpace(strings.Repeat("word ", words)), Chunks: words})
			model := llm.Model{ID: "fake-model", API: llm.APIOpenAICompletions, Provider: "fake", Input: []string{"text"}, ContextWindow: 1 << 20, MaxTokens: 1 << 16}
			sess, err := session.New(session.Config{Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: url, Provider: "fake"}}, Model: model})
			if err != nil {
				b.Fatal(err)
			}
			in, cmds := io.Pipe()
			w := &writeCounter{lineCounter: lineCounter{settled: make(chan struct{}, 1)}}
			done := make(chan error)
			go func() { done <- Serve(context.Background(), in, w, Config{Session: sess, Deltas: true}) }()
			prompt := func() {
				io.WriteString(cmds, `{"type":"prompt","message":"go"}`+"\n")
				<-w.settled
			}
			prompt() // the first answer fills the buffers and the loans
			updates, writes := w.updates, w.writes
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := proctest.CPUTime()
			for b.Loop() {
				prompt()
			}
			cpu := proctest.CPUTime() - cpu0
			runtime.ReadMemStats(&m1)
			n := float64(w.updates - updates)
			if n < float64(b.N*words) {
				b.Fatalf("%v message_update lines for %d answers of %d words", n, b.N, words)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/delta")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/delta")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/delta")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/delta")
			b.ReportMetric(float64(w.writes-writes)*1000/n, "writes/1k-deltas")
			cmds.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// writeCounter is a lineCounter that also counts the writes it gets.
type writeCounter struct {
	lineCounter
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.lineCounter.Write(p)
}
