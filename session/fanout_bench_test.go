package session

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkFanout streams 20,000 one-word deltas through a session to one
// subscriber, as Subscribe (the subscriber may keep every event) and as
// WatchLoaned (the RPC server's: it encodes each event and lets it go),
// and reports what one delta costs: time, allocations and bytes. The
// provider's own stream allocates nothing per delta (raw-stream in
// BenchmarkDeltaOverhead), so allocs/delta is the agent loop's and the
// fan-out's. Issue 25's target for the loaned path: 0 allocs/delta.
func BenchmarkFanout(b *testing.B) {
	const n = 20000
	for _, loaned := range []bool{false, true} {
		name := "subscribe"
		if loaned {
			name = "loaned"
		}
		b.Run(name, func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for b.Loop() {
				s, _ := New(Config{Provider: deltas{n}})
				got := 0
				fn := func(e Event) {
					if _, ok := e.(MessageUpdateEvent); ok {
						got++
					}
				}
				var sub *Subscription
				if loaned {
					sub = s.WatchLoaned(fn)
				} else {
					sub = s.Watch(fn)
				}
				if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
					b.Fatal(err)
				}
				sub.Close()
				if got < n {
					b.Fatalf("subscriber saw %d deltas", got)
				}
			}
			runtime.ReadMemStats(&m1)
			deltas := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/delta")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/deltas, "allocs/delta")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/deltas, "B/delta")
		})
	}
}
