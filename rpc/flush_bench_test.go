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
//
// An answer also costs allocations that do not grow with its length (the
// request, the loans of the deltas in flight), which allocs/delta spreads
// over its deltas; marginal runs a short and a long answer each iteration
// and reports what each delta more costs, the figure the target is about.
func BenchmarkDeltaPath(b *testing.B) {
	for _, words := range []int{1000, 10000, 50000} {
		b.Run("words="+strconv.Itoa(words), func(b *testing.B) {
			r := newDeltaRig(b, words)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := proctest.CPUTime()
			for b.Loop() {
				r.prompt()
			}
			cpu := proctest.CPUTime() - cpu0
			runtime.ReadMemStats(&m1)
			n := float64(r.deltas())
			b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/delta")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/delta")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/delta")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/delta")
			b.ReportMetric(float64(r.w.writes-r.writes)*1000/n, "writes/1k-deltas")
			r.close()
		})
	}
	b.Run("marginal=10000-50000", func(b *testing.B) {
		short, long := newDeltaRig(b, 10000), newDeltaRig(b, 50000)
		var allocs, bytes [2]int64 // short's, long's
		var m0, m1 runtime.MemStats
		for b.Loop() {
			for i, r := range []*deltaRig{short, long} {
				runtime.ReadMemStats(&m0)
				r.prompt()
				runtime.ReadMemStats(&m1)
				allocs[i] += int64(m1.Mallocs - m0.Mallocs)
				bytes[i] += int64(m1.TotalAlloc - m0.TotalAlloc)
			}
		}
		n := float64(long.deltas() - short.deltas())
		b.ReportMetric(float64(allocs[1]-allocs[0])/n, "allocs/marginal-delta")
		b.ReportMetric(float64(bytes[1]-bytes[0])/n, "B/marginal-delta")
		short.close()
		long.close()
	})
}

// deltaRig is an RPC server in delta-only form on a session whose model
// answers every prompt with the same words, one delta each.
type deltaRig struct {
	b               *testing.B
	words           int
	cmds            *io.PipeWriter
	w               *writeCounter
	done            chan error
	updates, writes int // w's counts after the warm-up answer
	answers         int // prompted since the warm-up
}

func newDeltaRig(b *testing.B, words int) *deltaRig {
	url := bulkServer(b, llmtest.Step{Text: strings.TrimSpace(strings.Repeat("word ", words)), Chunks: words})
	model := llm.Model{ID: "fake-model", API: llm.APIOpenAICompletions, Provider: "fake", Input: []string{"text"}, ContextWindow: 1 << 20, MaxTokens: 1 << 16}
	sess, err := session.New(session.Config{Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: url, Provider: "fake"}}, Model: model})
	if err != nil {
		b.Fatal(err)
	}
	in, cmds := io.Pipe()
	r := &deltaRig{b: b, words: words, cmds: cmds, w: &writeCounter{lineCounter: lineCounter{settled: make(chan struct{}, 1)}}, done: make(chan error)}
	go func() { r.done <- Serve(context.Background(), in, r.w, Config{Session: sess, Deltas: true}) }()
	r.prompt() // the first answer fills the buffers and the loans
	r.updates, r.writes, r.answers = r.w.updates, r.w.writes, 0
	return r
}

// prompt sends a prompt and waits until its answer is settled.
func (r *deltaRig) prompt() {
	io.WriteString(r.cmds, `{"type":"prompt","message":"go"}`+"\n")
	<-r.w.settled
	r.answers++
}

// deltas is how many message_update lines the answers since the warm-up
// wrote; it fails the benchmark if one answer wrote fewer than its words.
func (r *deltaRig) deltas() int {
	n := r.w.updates - r.updates
	if n < r.answers*r.words {
		r.b.Fatalf("%d message_update lines for %d answers of %d words", n, r.answers, r.words)
	}
	return n
}

func (r *deltaRig) close() {
	r.cmds.Close()
	if err := <-r.done; err != nil {
		r.b.Fatal(err)
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
