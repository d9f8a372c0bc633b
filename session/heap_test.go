package session

import (
	"context"
	"runtime"
	"testing"

	"github.com/rally-agent/rally/llm"
)

// held streams n one-word deltas, then holds the stream open until its
// context ends: a session in the middle of an answer.
type held struct {
	n       int
	started chan struct{}
}

func (h held) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	i := 0
	return llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
		if i < h.n {
			b.Text("0", "word ")
			i++
			return nil
		}
		if i == h.n {
			i++
			h.started <- struct{}{}
		}
		<-ctx.Done()
		return ctx.Err()
	}, nil), nil
}

// BenchmarkSessionHeap measures the live heap of one session with one
// subscriber, idle and in the middle of streaming an answer of 100
// deltas (the budgets: 16 KB and 64 KB). Goroutine stacks are
// reported apart (stack-bytes/session): they are not heap.
func BenchmarkSessionHeap(b *testing.B) {
	const n = 200
	for _, streaming := range []bool{false, true} {
		name := "idle"
		if streaming {
			name = "streaming"
		}
		b.Run(name, func(b *testing.B) {
			var heap, stack float64
			for b.Loop() {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				h0, s0 := int64(ms.HeapAlloc), int64(ms.StackInuse)
				started := make(chan struct{}, n)
				ctx, cancel := context.WithCancel(context.Background())
				sessions := make([]*Session, n)
				unsubs := make([]func(), n)
				runs := make([]*Run, 0, n)
				for i := range sessions {
					s, err := New(Config{Provider: held{n: 100, started: started}})
					if err != nil {
						b.Fatal(err)
					}
					sessions[i] = s
					unsubs[i] = s.Subscribe(func(Event) {})
					if streaming {
						r, err := s.Start(ctx, "go", PromptOptions{})
						if err != nil {
							b.Fatal(err)
						}
						runs = append(runs, r)
					}
				}
				if streaming {
					for range n {
						<-started
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&ms)
				heap += float64(int64(ms.HeapAlloc)-h0) / n
				stack += float64(int64(ms.StackInuse)-s0) / n
				cancel()
				for _, r := range runs {
					r.Wait()
				}
				for _, u := range unsubs {
					u()
				}
				runtime.KeepAlive(sessions)
			}
			b.ReportMetric(heap/float64(b.N), "heap-bytes/session")
			b.ReportMetric(stack/float64(b.N), "stack-bytes/session")
		})
	}
}
