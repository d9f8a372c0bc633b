package session

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// gatedReads is a provider whose stream brings `per` deltas a "read";
// before each read it waits until the test has seen every delta so far,
// the way a model waits for a client that answers what it has read. With
// hook set, the stream promises llm.Stream.OnWait and calls it before
// each read, as a stream read from a connection does.
type gatedReads struct {
	reads, per int
	hook       bool
	seen       func(n int) bool // waits until n deltas were seen
}

func (g gatedReads) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	h := new(llm.WaitHook)
	i := 0
	s := llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
		if i == g.reads*g.per {
			b.Finish(llm.Stop)
			return nil
		}
		if i > g.reads*g.per {
			return io.EOF
		}
		if i%g.per == 0 { // the next read
			h.Wait()
			if !g.seen(i) {
				return fmt.Errorf("the subscriber did not get %d deltas", i)
			}
		}
		b.Text("0", "w")
		i++
		return nil
	}, nil)
	if g.hook {
		s.Waits(h)
	}
	return s, nil
}

// TestHeldDeltasReachSubscribersBeforeTheStreamWaits: deltas a stream
// holds (it promised OnWait) reach every kind of subscriber when it is
// about to wait, and a stream that promised nothing has each delta
// delivered at once. A delta held past the wait would never be seen: the
// stream waits for it, and the test fails after 10 s.
func TestHeldDeltasReachSubscribersBeforeTheStreamWaits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hook  bool
		per   int
		watch func(s *Session, fn func(Event)) *Subscription
	}{
		{"promised/loaned", true, 5, func(s *Session, fn func(Event)) *Subscription { return s.WatchBatched(fn, func() {}) }},
		{"promised/subscribe", true, 5, func(s *Session, fn func(Event)) *Subscription { return s.Watch(fn) }},
		{"eager/loaned", false, 1, func(s *Session, fn func(Event)) *Subscription { return s.WatchBatched(fn, func() {}) }},
		{"eager/subscribe", false, 1, func(s *Session, fn func(Event)) *Subscription { return s.Watch(fn) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			got := 0
			more := make(chan struct{}, 1)
			seen := func(n int) bool {
				deadline := time.After(10 * time.Second)
				for {
					mu.Lock()
					ok := got >= n
					mu.Unlock()
					if ok {
						return true
					}
					select {
					case <-more:
					case <-deadline:
						return false
					}
				}
			}
			g := gatedReads{reads: 4, per: tc.per, hook: tc.hook, seen: seen}
			s, err := New(Config{Provider: g})
			if err != nil {
				t.Fatal(err)
			}
			sub := tc.watch(s, func(e Event) {
				if u, ok := e.(MessageUpdateEvent); ok && u.Assistant.Type == llm.EventTextDelta {
					mu.Lock()
					got++
					mu.Unlock()
					select {
					case more <- struct{}{}:
					default:
					}
				}
			})
			defer sub.Close()
			if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			if m := s.Messages(); len(m) != 2 || m[1].StopReason != llm.Stop {
				t.Fatalf("the answer did not finish: %+v", m[len(m)-1])
			}
		})
	}
}
