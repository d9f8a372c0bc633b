package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
)

// fakeTarget is a session config for the fake LLM at baseURL over client.
func fakeConfig(baseURL string, client *http.Client, pol retry.Policy) session.Config {
	return session.Config{
		Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: baseURL + "/v1", HTTP: client}},
		Model:    llm.Model{ID: fakeModel, Name: fakeModel, API: llm.APIOpenAICompletions, Provider: "fake", ContextWindow: 1 << 20, MaxTokens: 1 << 14},
		Retry:    pol.For,
	}
}

// abortInProcess measures, in a session embedded in this process, the time
// from AbortRetry during a wait to the subscriber receiving auto_retry_end,
// and from Abort during a stream to it receiving the aborted message_end.
func (r *runner) abortInProcess(ctx context.Context) []Row {
	pol := retry.Policy{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: 2 * time.Hour}
	measure := func(step llmtest.Step, when, until session.EventType, abort func(*session.Session)) Stat {
		r.fake.use(llmtest.New(step))
		var xs []float64
		for range r.cfg.Runs * 5 {
			s, err := session.New(fakeConfig(r.fake.URL, nil, pol))
			if err != nil {
				return failed(err)
			}
			seen, ended := make(chan struct{}, 1), make(chan time.Time, 1)
			unsub := s.Subscribe(func(e session.Event) {
				if m, ok := e.(session.MessageEndEvent); ok && m.Message.Role != llm.Assistant {
					return // the prompt's own message
				}
				switch e.Kind() {
				case when:
					select {
					case seen <- struct{}{}:
					default:
					}
				case until:
					select {
					case ended <- time.Now():
					default:
					}
				}
			})
			run, err := s.Start(ctx, "go", session.PromptOptions{})
			if err != nil {
				return failed(err)
			}
			<-seen
			for when == session.AutoRetryStart && !s.IsRetrying() {
				// The wait begins right after auto_retry_start is emitted.
				runtime.Gosched()
			}
			t0 := time.Now()
			abort(s)
			select {
			case t1 := <-ended:
				xs = append(xs, ms(t1.Sub(t0)))
			case <-time.After(10 * time.Second):
				s.Abort()
				unsub()
				return Stat{Err: fmt.Sprintf("no %s 10 s after the abort", until)}
			}
			_ = run.Wait()
			unsub()
		}
		return stat(xs)
	}
	wait := measure(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
		session.AutoRetryStart, session.AutoRetryEnd, (*session.Session).AbortRetry)
	stream := measure(llmtest.Step{Text: strings.TrimSpace(strings.Repeat("slow ", 2000)), Chunks: 2000, Delay: 2 * time.Millisecond},
		session.MessageUpdate, session.MessageEnd, (*session.Session).Abort)
	return []Row{
		{Group: "abort", Name: "AbortRetry during a wait, in process", Unit: "ms", Rally: wait, Target: below99(1)},
		{Group: "abort", Name: "Abort during a stream, in process", Unit: "ms", Rally: stream, Target: below99(1)},
	}
}

// resume measures loading a session file of n messages: journal.Load in
// process (time, MB/s, heap kept ÷ file size) and over RPC, spawn with
// --session to the first get_state (time, peak RSS ÷ file size), which
// must count every message.
func (r *runner) resume(ctx context.Context) []Row {
	var rows []Row
	for _, n := range r.sizes(1000, 10000, 50000) {
		r.progress("resume %d messages", n)
		path, size, err := writeSession(r.scratch(), n)
		name := fmt.Sprintf("%dk messages", n/1000)
		if err != nil {
			return append(rows, Row{Group: "resume", Name: name, Rally: failed(err)})
		}
		mb := float64(size) / (1 << 20)
		load, rate, kept := r.loadJournal(path, size)
		rows = append(rows,
			Row{Group: "resume", Name: fmt.Sprintf("%s (%.1f MiB): journal.Load in process", name, mb), Unit: "ms", Rally: load},
			Row{Group: "resume", Name: name + ": journal load rate", Unit: "MB/s", Higher: true, Rally: rate, Target: atLeast(100)},
			Row{Group: "resume", Name: name + ": heap kept after load ÷ file size", Unit: "×", Rally: kept},
		)
		rpcRows := r.both(func(a Agent) []Row {
			first, rss := r.resumeRPC(ctx, a, path, n, size)
			rows := []Row{
				{Group: "resume", Name: name + ": RPC spawn --session → first get_state", Unit: "ms", Rally: first},
				{Group: "resume", Name: name + ": peak RSS at the first get_state ÷ file size", Unit: "×", Rally: rss},
			}
			if n == 50000 { // the targets are for long sessions
				rows[0].Target, rows[1].Target = below(400), below(2.5)
			}
			return rows
		})
		rows = append(rows, rpcRows...)
	}
	return rows
}

func (r *runner) loadJournal(path string, size int64) (load, rate, kept Stat) {
	runs := r.runs(time.Duration(size/(20<<20))*time.Second, time.Minute)
	var ts, rs, ks []float64
	for range runs {
		h0 := settledHeap()
		t0 := time.Now()
		l, err := journal.Load(path)
		d := time.Since(t0)
		if err != nil {
			return failed(err), failed(err), failed(err)
		}
		h1 := settledHeap()
		runtime.KeepAlive(l)
		ts = append(ts, ms(d))
		rs = append(rs, float64(size)/1e6/d.Seconds())
		ks = append(ks, (float64(h1)-float64(h0))/float64(size))
	}
	return stat(ts), stat(rs), stat(ks)
}

// settledHeap is the live heap after two collections. One is not enough
// for a difference of two reads: a sync.Pool's objects survive the first
// collection after their last use in its victim cache, so what an earlier
// measurement left in pools could count in the first read and not the
// second: a full run once printed a negative minimum for the 1k row's
// "heap kept". TestSettledHeapIgnoresPools holds the pool's leftovers gone.
func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (r *runner) resumeRPC(ctx context.Context, a Agent, path string, n int, size int64) (first, rss Stat) {
	var ts, rs []float64
	start := time.Now()
	for i := range r.cfg.Runs {
		if i >= 3 && time.Since(start) > 20*time.Second {
			break // a slow agent: enough runs for a median
		}
		// A copy per run: an agent may append to the file it resumes.
		dir := r.scratch()
		cp := filepath.Join(dir, "cwd", "session.jsonl")
		if err := copyFile(path, cp); err != nil {
			return failed(err), failed(err)
		}
		cmd, err := a.command(ctx, dir, r.fake.URL, tuning{}, "--session", cp)
		if err != nil {
			return failed(err), failed(err)
		}
		t0 := time.Now()
		p, err := startProc(cmd)
		if err != nil {
			return failed(err), failed(err)
		}
		resp, err := p.call("s", `{"id":"s","type":"get_state"}`)
		d := time.Since(t0)
		if err == nil {
			err = resumed(resp, n)
		}
		var kib float64
		if err == nil {
			kib, err = peakRSS(p.cmd.Process.Pid)
		}
		_ = p.stop()
		if err != nil {
			return failed(err), failed(err)
		}
		ts = append(ts, ms(d))
		rs = append(rs, kib*1024/float64(size))
	}
	return stat(ts), stat(rs)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// writeSession writes a session file of n messages, alternating a user
// question and an assistant answer of a realistic length (about 540 bytes
// a message on disk, as in the measurement), through the journal
// itself.
func writeSession(dir string, n int) (path string, size int64, err error) {
	j, err := journal.Create(dir, dir)
	if err != nil {
		return "", 0, err
	}
	question := strings.Repeat("Why does this function return early when the input is empty? ", 2)
	answer := strings.Repeat("Because the loop below assumes at least one element; the early return keeps it simple. ", 4)
	for i := range n {
		m := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(fmt.Sprintf("%d: %s", i, question))}, Timestamp: time.Now().UnixMilli()}
		if i%2 == 1 {
			m = llm.Message{Role: llm.Assistant, Content: []llm.Content{llm.Text(fmt.Sprintf("%d: %s", i, answer))},
				API: llm.APIOpenAICompletions, Provider: "fake", Model: fakeModel, StopReason: llm.Stop,
				Usage: &llm.Usage{Input: 1000 + i, Output: 90, TotalTokens: 1090 + i}, Timestamp: time.Now().UnixMilli()}
		}
		if _, err := j.AppendMessage(m, false); err != nil {
			_ = j.Close()
			return "", 0, err
		}
	}
	if err := j.Close(); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(j.Path())
	if err != nil {
		return "", 0, fmt.Errorf("bench: %w", err)
	}
	return j.Path(), fi.Size(), nil
}

// resumed checks a get_state answer of a process that resumed n messages.
func resumed(resp response, n int) error {
	if !resp.Success {
		return fmt.Errorf("get_state: %s", resp.Error)
	}
	var st struct {
		MessageCount int `json:"messageCount"`
	}
	if err := json.Unmarshal(resp.Data, &st); err != nil {
		return fmt.Errorf("get_state: %w", err)
	}
	if st.MessageCount != n {
		return fmt.Errorf("get_state: messageCount %d after resuming %d messages", st.MessageCount, n)
	}
	return nil
}
