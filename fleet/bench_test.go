package fleet_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// timed measures the time spent inside the wrapped provider, so that the
// benchmark can subtract the fake LLM's own HTTP exchange and report what
// the Gate adds.
type timed struct {
	llm.Provider
	inner time.Duration
}

func (p *timed) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	start := time.Now()
	s, err := p.Provider.Stream(ctx, req)
	p.inner = time.Since(start)
	return s, err
}

// BenchmarkGate reports the latency a Gate adds to one request with Redis
// on loopback: the time of Gate.Stream minus the time of the provider
// call inside it, as p50 and p99 in microseconds (target: p99 under
// 1 ms). "full" has a budget and the breaker on (one Lua script before
// the call, nothing after a success); "off" has neither, for comparison.
func BenchmarkGate(b *testing.B) {
	rs := redistest.Start(b)
	fake := llmtest.NewServer(b, llmtest.Step{Text: "ok"})
	for _, c := range []struct {
		name    string
		budget  fleet.Budget
		breaker fleet.Breaker
	}{
		{"full", fleet.Budget{Requests: 1 << 30, Tokens: 1 << 30}, fleet.Breaker{Failures: 5}},
		{"off", fleet.Budget{}, fleet.Breaker{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := fleet.Open(fleet.Config{URL: rs.URL})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			g := gate(f, fake, key1)
			inner := &timed{Provider: g.Provider}
			g.Provider, g.Budget, g.Breaker = inner, c.budget, c.breaker
			g.Estimate = func(*llm.Request) int { return 100 }
			ctx := context.Background()
			ask(ctx, g) // connect and load the script outside the timing
			added := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				s, err := g.Stream(ctx, request())
				total := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				llm.Collect(s) // the fake's goroutine is done before the next one
				added = append(added, total-inner.inner)
			}
			if f.Local() {
				b.Fatal("the fleet went local during the benchmark")
			}
			report(b, added)
		})
	}
	// The same Gate around a provider that answers at once in-process:
	// the fleet's own cost, without the fake LLM's HTTP goroutines
	// competing for the two cores while it is measured.
	b.Run("full-no-http", func(b *testing.B) {
		f, err := fleet.Open(fleet.Config{URL: rs.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		g := &fleet.Gate{Provider: instant{}, Fleet: f, ProviderName: "acme", Model: "m", Fingerprint: "bench",
			Budget: fleet.Budget{Requests: 1 << 30, Tokens: 1 << 30}, Breaker: fleet.Breaker{Failures: 5},
			Estimate: func(*llm.Request) int { return 100 }}
		ctx := context.Background()
		g.Stream(ctx, request())
		took := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if _, err := g.Stream(ctx, request()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		report(b, took)
	})
	// The floor: one bare round trip to the same Redis, on this machine
	// now. On a loaded machine its p99 is the scheduler's, not rally's.
	b.Run("ping", func(b *testing.B) {
		f, err := fleet.Open(fleet.Config{URL: rs.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		ctx := context.Background()
		f.Ping(ctx)
		took := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if err := f.Ping(ctx); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		report(b, took)
	})
}

// report adds the p50 and p99 of ds, in microseconds.
func report(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	pct := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

func request() *llm.Request {
	return &llm.Request{Model: llm.Model{ID: "m", Provider: "acme", API: llm.APIOpenAICompletions},
		Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("hi")}}}}
}

// instant answers every request at once with an empty finished stream.
type instant struct{}

func (instant) Stream(context.Context, *llm.Request) (*llm.Stream, error) {
	return llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error { b.Finish(llm.Stop); return nil }, nil), nil
}
