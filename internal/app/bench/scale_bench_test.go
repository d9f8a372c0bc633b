package bench

import (
	"context"
	"testing"
)

// BenchmarkScaleHeap reports the scale group's heap figures for 200
// sessions in this process (the fake LLM's memory included):
// go test -run '^$' -bench ScaleHeap -benchtime 3x ./internal/app/bench/
func BenchmarkScaleHeap(b *testing.B) {
	f, err := startFake()
	if err != nil {
		b.Fatal(err)
	}
	defer f.close()
	const n = 200
	var idle, streaming float64
	for i := range b.N {
		f.use(newFaulty(0.2, uint64(i+1), scaleAnswer(n)))
		res := Scale(context.Background(), f.URL, n)
		if res.Err != "" {
			b.Fatal(res.Err)
		}
		idle += res.IdleHeap
		streaming += res.StreamingHeap
	}
	b.ReportMetric(idle/float64(b.N), "idle-B/session")
	b.ReportMetric(streaming/float64(b.N), "streaming-B/session")
}
