package session

import (
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestSlowSubscriber: a subscriber that stops taking events holds the
// session up once it is subscriberBuffer behind, not before; its queue
// grows only as far as it falls behind; every event arrives in order.
func TestSlowSubscriber(t *testing.T) {
	for _, extra := range []int{-subscriberBuffer + 10, 0, 10} {
		total := subscriberBuffer + extra
		t.Run(strconv.Itoa(total)+" events", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var h hub
				release := make(chan struct{})
				var got []int
				sub := h.subscribe(func(e Event) {
					<-release
					got = append(got, e.(AutoRetryStartEvent).Attempt)
				})
				var emitted atomic.Int64
				go func() {
					for i := range total {
						h.emit(AutoRetryStartEvent{Attempt: i})
						emitted.Add(1)
					}
				}()
				synctest.Wait()
				if want := int64(min(total, subscriberBuffer)); emitted.Load() != want {
					t.Fatalf("%d of %d emits returned behind a stalled subscriber, want %d", emitted.Load(), total, want)
				}
				sub.mu.Lock()
				queued := cap(sub.queue)
				sub.mu.Unlock()
				if total < 100 && queued > 2*total {
					t.Errorf("%d events behind, the queue holds room for %d", total, queued)
				}
				close(release)
				synctest.Wait()
				sub.Close()
				if want := seq(total); !slices.Equal(got, want) {
					t.Fatalf("delivered %d events out of order or lost (want %d)", len(got), total)
				}
			})
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
