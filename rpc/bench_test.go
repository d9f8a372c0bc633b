package rpc

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
)

// median reports the median of ds as a metric, in milliseconds.
func reportMedian(b *testing.B, ds []time.Duration, unit string) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, unit)
}

// BenchmarkStartToState is the time from starting `rally --mode rpc` to
// reading its first get_state response (the budget: 30 ms).
func BenchmarkStartToState(b *testing.B) {
	bin := rallyBinary(b)
	isolate(b, "")
	for _, mode := range []struct{ name, flag string }{{"session-file", ""}, {"no-session", "--no-session"}} {
		b.Run(mode.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				args := []string{"--mode", "rpc"}
				if mode.flag != "" {
					args = append(args, mode.flag)
				}
				t0 := time.Now()
				p := startProcArgs(b, bin, args)
				p.send(`{"id":"s","type":"get_state"}`)
				p.response("s")
				ds = append(ds, time.Since(t0))
				p.stop()
			}
			reportMedian(b, ds, "ms-median")
		})
	}
}

// BenchmarkAbortRetryLatency is the time from writing abort_retry during a
// 5 s retry wait to reading the auto_retry_end line (budget: 2 ms median).
func BenchmarkAbortRetryLatency(b *testing.B) {
	isolate(b, `{"retry":{"baseDelayMs":5000}}`)
	srv := llmtest.NewServer(b, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded})
	p := startProc(b, fakeArgs(srv)...)
	var ds []time.Duration
	for b.Loop() {
		p.send(`{"type":"prompt","message":"hi"}`)
		p.event(agent.AutoRetryStart)
		t0 := time.Now()
		p.send(`{"type":"abort_retry"}`)
		end := p.event(agent.AutoRetryEnd)
		ds = append(ds, time.Since(t0))
		if end["finalError"] != "Retry cancelled" {
			b.Fatalf("auto_retry_end %v", end)
		}
		p.event(agent.AgentSettled)
	}
	reportMedian(b, ds, "ms-median")
}

// BenchmarkDeltas measures streamed deltas per second on rally's stdout:
// through a real process fed by the fake LLM over HTTP, and in process on
// the sim model with no delay (what the RPC layer itself costs). Each
// answer is `words` words, one delta each; message_update carries the
// whole partial message, so longer answers cost more per delta.
func BenchmarkDeltas(b *testing.B) {
	for _, words := range []int{100, 1000} {
		text := strings.TrimSpace(strings.Repeat("stream ", words))
		b.Run("process/words="+strconv.Itoa(words), func(b *testing.B) {
			isolate(b, "")
			srv := llmtest.NewServer(b, llmtest.Step{Text: text, Chunks: words})
			p := startProc(b, fakeArgs(srv)...)
			n := 0
			b.ResetTimer()
			for b.Loop() {
				p.send(`{"type":"prompt","message":"go"}`)
				p.until("agent_settled", func(m map[string]any) bool {
					if m["type"] == agent.MessageUpdate {
						n++
					}
					return m["type"] == agent.AgentSettled
				})
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "deltas/s")
		})
		b.Run("in-process/words="+strconv.Itoa(words), func(b *testing.B) {
			sess, err := session.New(session.Config{Provider: words2(words), Model: sim.Info()})
			if err != nil {
				b.Fatal(err)
			}
			in, cmds := io.Pipe()
			w := &lineCounter{settled: make(chan struct{}, 1)}
			done := make(chan error)
			go func() { done <- Serve(context.Background(), in, w, Config{Session: sess}) }()
			for b.Loop() {
				io.WriteString(cmds, `{"type":"prompt","message":"go"}`+"\n")
				<-w.settled
			}
			b.ReportMetric(float64(w.updates)/b.Elapsed().Seconds(), "deltas/s")
			cmds.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// lineCounter counts message_update lines and signals settled at each
// agent_settled.
type lineCounter struct {
	updates int
	settled chan struct{}
	partial []byte
}

func (w *lineCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			break
		}
		line := p[:i]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
			w.partial = w.partial[:0]
		}
		switch {
		case bytes.HasSuffix(line, []byte(`"type":"message_update"}`)):
			w.updates++
		case bytes.Equal(line, []byte(`{"type":"agent_settled"}`)):
			w.settled <- struct{}{}
		}
		p = p[i+1:]
	}
	return n, nil
}

// words2 is a provider that streams n one-word text deltas as fast as it
// can.
type words2 int

func (n words2) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	i := 0
	msg := llm.Message{Role: llm.Assistant, API: llm.APISim, Provider: "sim", Model: "sim"}
	return llm.NewStream(msg, func(b *llm.Builder) error {
		switch {
		case i < int(n):
			b.Text("0", "stream ")
		case i == int(n):
			b.Finish(llm.Stop)
		default:
			return io.EOF
		}
		i++
		return nil
	}, nil), nil
}
