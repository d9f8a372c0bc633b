package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// faulty answers a fraction of requests with a random transient fault of
// the fake LLM (an overload, a 500, a reset before headers, a drop after
// two chunks, an in-stream error event) and the rest with ok.
type faulty struct {
	ok     http.Handler
	faults []http.Handler
	p      float64

	mu  sync.Mutex
	rnd *rand.Rand
}

func newFaulty(p float64, seed uint64, ok llmtest.Step) *faulty {
	text := ok.Text
	return &faulty{
		ok: llmtest.New(ok), p: p, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		faults: []http.Handler{
			llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}),
			llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.ServerError}),
			llmtest.New(llmtest.Step{Fault: llmtest.Reset}),
			llmtest.New(llmtest.Step{Fault: llmtest.Drop, After: 2, Text: text}),
			llmtest.New(llmtest.Step{Fault: llmtest.ErrorEvent, After: 1, Text: text}),
		},
	}
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	h := f.ok
	if f.rnd.Float64() < f.p {
		h = f.faults[f.rnd.IntN(len(f.faults))]
	}
	f.mu.Unlock()
	h.ServeHTTP(w, r)
}

// ScaleResult is what one scale run found.
type ScaleResult struct {
	Sessions  int `json:"sessions"`
	Settled   int `json:"settled"`
	Succeeded int `json:"succeeded"`
	// IdleHeap is the heap per session subscribed and idle, in bytes:
	// what creating and subscribing one allocates, an upper bound of what
	// it keeps that, unlike a difference of two heap reads (which another
	// goroutine's freed garbage can turn negative), is never below 0.
	IdleHeap float64 `json:"idleHeap"`
	// StreamingHeap is the heap per session while streaming, in bytes,
	// sampled when Streaming sessions were mid-answer at once.
	StreamingHeap float64 `json:"streamingHeap"`
	Streaming     int     `json:"streaming"`
	Seconds       float64 `json:"seconds"`
	Err           string  `json:"error,omitempty"`
}

// scale runs N concurrent sessions against the fake LLM with 20 % random
// transient faults, in a worker process of their own (Config.Worker) so
// that the fake LLM's memory is not in the heap measured.
func (r *runner) scale(ctx context.Context) []Row {
	var rows []Row
	for _, n := range r.sizes(100, 1000, 10000) {
		r.progress("scale: %d concurrent sessions, 20%% faults", n)
		r.fake.use(newFaulty(0.2, uint64(n), scaleAnswer(n)))
		res, err := r.scaleRun(ctx, n)
		if err == nil && res.Err != "" {
			err = fmt.Errorf("%s", res.Err)
		}
		name := fmt.Sprintf("%d sessions", n)
		if err != nil {
			rows = append(rows, Row{Group: "scale", Name: name, Rally: failed(err)})
			continue
		}
		one := single
		settledRow := Row{Group: "scale", Name: name + ": settled", Unit: "%", Higher: true, Rally: one(100 * float64(res.Settled) / float64(n)),
			Note: fmt.Sprintf("%d succeeded, %d final errors, %.1f s", res.Succeeded, res.Settled-res.Succeeded, res.Seconds)}
		if n == 10000 {
			settledRow.Target = atLeast(100)
		}
		rows = append(rows,
			settledRow,
			Row{Group: "scale", Name: name + ": heap per idle subscribed session", Unit: "KiB", Rally: one(res.IdleHeap / 1024), Target: below(16)},
			Row{Group: "scale", Name: name + ": heap per streaming session", Unit: "KiB", Rally: one(res.StreamingHeap / 1024), Target: below(64),
				Note: fmt.Sprintf("sampled with %d of %d streaming at once", res.Streaming, n)},
		)
	}
	return rows
}

// scaleAnswer is a ten-chunk answer slow enough that the sessions stream
// at the same time: longer for more sessions, which take longer to start.
func scaleAnswer(n int) llmtest.Step {
	return llmtest.Step{Text: strings.TrimSpace(strings.Repeat("scale ", 10)), Chunks: 10, Delay: 50*time.Millisecond + time.Duration(n)*50*time.Microsecond}
}

func (r *runner) scaleRun(ctx context.Context, n int) (ScaleResult, error) {
	if len(r.cfg.Worker) == 0 {
		return Scale(ctx, r.fake.URL, n), nil
	}
	w := r.cfg.Worker
	cmd := exec.CommandContext(ctx, w[0], append(w[1:len(w):len(w)], "--scale-worker", strconv.Itoa(n), "--fake-url", r.fake.URL)...)
	var out bytes.Buffer
	errb := &limited{n: 16 << 10}
	cmd.Stdout, cmd.Stderr = &out, errb
	if err := cmd.Run(); err != nil {
		return ScaleResult{}, fmt.Errorf("scale worker: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var res ScaleResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return ScaleResult{}, fmt.Errorf("scale worker: %w: %.200s", err, out.Bytes())
	}
	return res, nil
}

// Scale runs n sessions at once against the fake LLM at baseURL and
// reports how they ended and the heap they took, idle and streaming. It
// is the scale worker's body (`rally bench --scale-worker N`).
func Scale(ctx context.Context, baseURL string, n int) ScaleResult {
	res := ScaleResult{Sessions: n}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	tr := llm.NewTransport() // rally's own, as its clients use by default
	tr.MaxIdleConnsPerHost = n
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	pol := retry.Policy{MaxRetries: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: time.Second}

	heap := func() (live, allocated float64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc), float64(m.TotalAlloc)
	}
	// The classifier builds its tables (about 700 KB) on the first failure
	// it reads, once for the process: built before the baseline, they are
	// not counted as the heap of the sessions that happen to fail first
	// (7 KiB a session of 100).
	retry.Inspect(errors.New("503 service unavailable: the server is overloaded"), time.Now())
	_, before := heap()
	var streaming atomic.Int64
	sessions := make([]*session.Session, n)
	unsubs := make([]func(), n)
	for i := range sessions {
		s, err := session.New(fakeConfig(baseURL, client, pol))
		if err != nil {
			res.Err = err.Error()
			return res
		}
		sessions[i] = s
		unsubs[i] = s.Subscribe(func(e session.Event) {
			switch e := e.(type) {
			case session.MessageStartEvent:
				if e.Message.Role == llm.Assistant {
					streaming.Add(1)
				}
			case session.MessageEndEvent:
				if e.Message.Role == llm.Assistant {
					streaming.Add(-1)
				}
			case session.MessageDiscardedEvent:
				streaming.Add(-1)
			}
		})
	}
	idle, after := heap()
	res.IdleHeap = (after - before) / float64(n)

	t0 := time.Now()
	var settled, succeeded atomic.Int64
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			err := s.Prompt(ctx, "go", session.PromptOptions{})
			settled.Add(1)
			if err == nil && lastStop(s) == llm.Stop {
				succeeded.Add(1)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// Sample the heap each time more sessions stream at once than at the
	// last sample, from half of them on.
	best := int64(n/2 - 1)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if now := streaming.Load(); now > best+best/20 {
				h, _ := heap()
				if now = streaming.Load(); now > 0 {
					res.StreamingHeap = (h-idle)/float64(now) + res.IdleHeap
					res.Streaming, best = int(now), now
				}
			}
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	for _, u := range unsubs {
		u()
	}
	res.Settled, res.Succeeded = int(settled.Load()), int(succeeded.Load())
	if res.Streaming == 0 {
		res.Err = "never sampled: fewer than half the sessions streamed at once"
	}
	return res
}

func lastStop(s *session.Session) llm.StopReason {
	ms := s.Messages()
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1].StopReason
}

// WriteScale runs Scale and writes its result as JSON.
func WriteScale(ctx context.Context, w io.Writer, baseURL string, n int) error {
	return json.NewEncoder(w).Encode(Scale(ctx, baseURL, n))
}
