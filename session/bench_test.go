package session

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// deltas streams n one-word text deltas as fast as it can.
type deltas struct{ n int }

func (d deltas) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	i := 0
	return llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
		if i == d.n {
			b.Finish(llm.Stop)
			return nil
		}
		if i > d.n {
			return io.EOF
		}
		b.Text("0", "word ")
		i++
		return nil
	}, nil), nil
}

// BenchmarkDeltaOverhead measures what the session adds per streamed delta
// (agent loop, event snapshot, fan-out to one subscriber) over reading the
// provider's stream directly. The budget is 5 µs.
func BenchmarkDeltaOverhead(b *testing.B) {
	const n = 20000
	b.Run("raw-stream", func(b *testing.B) {
		for b.Loop() {
			s, _ := deltas{n}.Stream(context.Background(), nil)
			llm.Collect(s)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delta")
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			s, _ := New(Config{Provider: deltas{n}})
			got := 0
			unsub := s.Subscribe(func(e Event) {
				if _, ok := e.(MessageUpdateEvent); ok {
					got++
				}
			})
			if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
				b.Fatal(err)
			}
			unsub()
			if got < n {
				b.Fatalf("subscriber saw %d deltas", got)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delta")
	})
}

// BenchmarkAbortRetryLatency measures, in process, the time from AbortRetry
// during a retry wait to the subscriber receiving auto_retry_end (the
// issue's budget: under 1 ms at p99).
func BenchmarkAbortRetryLatency(b *testing.B) {
	pol := retry.Policy{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: 2 * time.Hour}
	var lat []time.Duration
	for b.Loop() {
		f := &fake{steps: []step{{err: overloaded()}}}
		s, _ := New(Config{Provider: f, Retry: pol.For})
		started, ended := make(chan struct{}, 1), make(chan time.Time, 1)
		unsub := s.Subscribe(func(e Event) {
			switch e.(type) {
			case AutoRetryStartEvent:
				started <- struct{}{}
			case AutoRetryEndEvent:
				ended <- time.Now()
			}
		})
		done := make(chan error, 1)
		go func() { done <- s.Prompt(context.Background(), "hi", PromptOptions{}) }()
		<-started
		for !s.IsRetrying() {
			// The wait begins right after auto_retry_start is emitted.
			time.Sleep(10 * time.Microsecond)
		}
		t0 := time.Now()
		s.AbortRetry()
		lat = append(lat, (<-ended).Sub(t0))
		<-done
		unsub()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
