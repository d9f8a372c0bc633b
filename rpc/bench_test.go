package rpc

import (
	"bytes"
	"context"
	"github.com/rally-agent/rally/internal/jsonl"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
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
	for _, mode := range []struct {
		name, flag string
		resume     int // messages in the session file resumed
	}{{"session-file", "", 0}, {"no-session", "--no-session", 0}, {"resume-50k", "--session", 50000}} {
		b.Run(mode.name, func(b *testing.B) {
			var ds, cpu []time.Duration
			var file []byte
			if mode.resume > 0 {
				file = longSession(b, mode.resume)
			}
			var peak int64
			for b.Loop() {
				args := []string{"--mode", "rpc"}
				if mode.flag != "" {
					args = append(args, mode.flag)
				}
				if file != nil {
					// A fresh copy each time: opening it may append.
					path := filepath.Join(b.TempDir(), "s.jsonl")
					if err := os.WriteFile(path, file, 0o600); err != nil {
						b.Fatal(err)
					}
					args = append(args, path)
				}
				t0 := time.Now()
				p := startProcArgs(b, bin, args)
				p.send(`{"id":"s","type":"get_state"}`)
				p.response("s")
				ds = append(ds, time.Since(t0))
				p.stop()
				st := p.cmd.ProcessState
				cpu = append(cpu, st.UserTime()+st.SystemTime())
				if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
					peak = max(peak, ru.Maxrss<<10)
				}
			}
			reportMedian(b, ds, "ms-median")
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
			if file != nil {
				b.ReportMetric(float64(peak)/float64(len(file)), "peak-rss/file")
			}
			// The whole process's CPU time (to its exit), which other
			// load on the machine disturbs less than the wall time.
			reportMedian(b, cpu, "ms-cpu-median")
		})
	}
}

// longSession is a session file of n messages shaped like a coding
// session's (prompts, answers with a tool call, tool results).
func longSession(b *testing.B, n int) []byte {
	j, err := journal.Create(b.TempDir(), "/p")
	if err != nil {
		b.Fatal(err)
	}
	answer := strings.Repeat("Some answer text of a typical length, with \"quotes\" and a\nnewline. ", 6)
	for i := range n {
		m := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("please look at main.go and fix the failing test " + strconv.Itoa(i))}}
		switch i % 3 {
		case 1:
			m = llm.Message{Role: llm.Assistant, API: "openai-completions", Provider: "sim", Model: "sim",
				Content:    []llm.Content{llm.Text(answer), {Type: llm.ToolCallType, ID: "call_" + strconv.Itoa(i), Name: "read", Arguments: []byte(`{"path":"main.go"}`)}},
				Usage:      &llm.Usage{Input: 10, Output: 3, TotalTokens: 13},
				StopReason: llm.ToolUse}
		case 2:
			m = llm.Message{Role: llm.ToolResult, ToolCallID: "call_" + strconv.Itoa(i-1), ToolName: "read",
				Content: []llm.Content{llm.Text(strings.Repeat("package main\n\nfunc main() {}\n", 8))}}
		}
		m.Timestamp = int64(1700000000000 + i)
		if _, err := j.AppendMessage(m, false); err != nil {
			b.Fatal(err)
		}
	}
	j.Close()
	out, err := os.ReadFile(j.Path())
	if err != nil {
		b.Fatal(err)
	}
	return out
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
		p.event(session.AutoRetryStart)
		t0 := time.Now()
		p.send(`{"type":"abort_retry"}`)
		end := p.event(session.AutoRetryEnd)
		ds = append(ds, time.Since(t0))
		if end["finalError"] != "Retry cancelled" {
			b.Fatalf("auto_retry_end %v", end)
		}
		p.event(session.AgentSettled)
	}
	reportMedian(b, ds, "ms-median")
}

// BenchmarkDeltas measures streamed deltas per second on rally's stdout:
// through a real process fed by the fake LLM's stream over HTTP, and in
// process with a provider that streams as fast as it can (what the RPC
// layer itself costs). Each answer is `words` words, one delta each. In
// the default form message_update carries the whole partial message
// (twice, as in the reference protocol), so longer answers cost more
// bytes per delta; in the delta-only form (set_event_options
// {partial:false}) a line is the same size at any length.
func BenchmarkDeltas(b *testing.B) {
	for _, mode := range []struct {
		name  string
		setup string
		words []int
	}{
		{"full", "", []int{100, 1000, 10000}},
		{"deltas", `{"type":"set_event_options","partial":false}` + "\n", []int{1000, 10000, 50000}},
	} {
		for _, words := range mode.words {
			name := mode.name + "/words=" + strconv.Itoa(words)
			text := strings.TrimSpace(strings.Repeat("stream ", words))
			b.Run("process/"+name, func(b *testing.B) {
				isolate(b, "")
				url := bulkServer(b, llmtest.Step{Text: text, Chunks: words})
				cmd := exec.Command(rallyBinary(b), "--mode", "rpc", "--no-session", "--api", "openai-completions", "--base-url", url, "--model", "fake-model")
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				defer func() { in.Close(); io.Copy(io.Discard, out); cmd.Wait() }()
				io.WriteString(in, mode.setup)
				// Lines are matched in place, not copied or decoded: the
				// reader must not be what is measured.
				lr := jsonl.NewReader(out, maxClientLine)
				n, sent := 0, 0
				var streaming time.Duration // first delta to last, summed
				for b.Loop() {
					io.WriteString(in, `{"type":"prompt","message":"go"}`+"\n")
					var first, last time.Time
					for {
						line, err := lr.Next()
						if err != nil {
							b.Fatal(err)
						}
						sent += len(line) + 1
						if isUpdate(line) {
							if n++; first.IsZero() {
								first = time.Now()
							}
							last = time.Now()
						} else if string(line) == `{"type":"agent_settled"}` {
							break
						}
					}
					streaming += last.Sub(first)
				}
				// deltas/s counts the whole prompt (its HTTP request, the
				// events around the stream); deltas/s-streaming only the
				// time from the first delta line to the last (not
				// reported for short answers, whose deltas arrive in a
				// write or two).
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "deltas/s")
				if words >= 1000 {
					b.ReportMetric(float64(n)/streaming.Seconds(), "deltas/s-streaming")
				}
				b.ReportMetric(float64(sent)/float64(b.N), "stdout-bytes/op")
			})
			b.Run("in-process/"+name, func(b *testing.B) {
				sess, err := session.New(session.Config{Provider: words2(words), Model: sim.Info()})
				if err != nil {
					b.Fatal(err)
				}
				in, cmds := io.Pipe()
				w := &lineCounter{settled: make(chan struct{}, 1)}
				done := make(chan error)
				go func() { done <- Serve(context.Background(), in, w, Config{Session: sess}) }()
				io.WriteString(cmds, mode.setup)
				for b.Loop() {
					io.WriteString(cmds, `{"type":"prompt","message":"go"}`+"\n")
					<-w.settled
				}
				b.ReportMetric(float64(w.updates)/b.Elapsed().Seconds(), "deltas/s")
				b.ReportMetric(float64(w.bytes)/float64(b.N), "stdout-bytes/op")
				cmds.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// isUpdate reports whether line is a message_update, in either form.
func isUpdate(line []byte) bool {
	return bytes.HasSuffix(line, []byte(`"type":"message_update"}`))
}

// lineCounter counts message_update lines and signals settled at each
// agent_settled.
type lineCounter struct {
	updates int
	bytes   int
	settled chan struct{}
	partial []byte
}

func (w *lineCounter) Write(p []byte) (int, error) {
	n := len(p)
	w.bytes += n
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
		case isUpdate(line):
			w.updates++
		case bytes.Equal(line, []byte(`{"type":"agent_settled"}`)):
			w.settled <- struct{}{}
		}
		p = p[i+1:]
	}
	return n, nil
}

// bulkServer serves the fake LLM's answer to step, recorded once and sent
// in one write per request: the fake LLM's own cost (a write and a JSON
// encoding per chunk) would otherwise be what the benchmark measures.
func bulkServer(b testing.TB, step llmtest.Step) string {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"fake-model","stream":true,"messages":[]}`))
	llmtest.New(step).ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/v1"
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
