package telemetry

import (
	"context"
	"sync"
	"time"
)

// worker is a provider's one export goroutine: it runs its function
// every interval, or sooner when poked, until halted. The tracer and the
// meter share it so that stopping within the flush's deadline is one
// rule in one place.
type worker struct {
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func startWorker(every time.Duration, fn func()) *worker {
	w := &worker{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-w.wake:
			case <-tick.C:
			}
			fn()
		}
	}()
	return w
}

// poke asks for a run now; one already asked for is enough.
func (w *worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// halt stops the goroutine, waiting within ctx for a run under way (an
// export to a collector that does not answer).
func (w *worker) halt(ctx context.Context) error {
	w.once.Do(func() { close(w.stop) })
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
