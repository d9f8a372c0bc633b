package rpc

import (
	"context"
	"sync"
)

// Subscribe registers fn for every event from now on, delivered in order
// on a goroutine of its own, so fn may call the client's methods. The
// queue in front of fn is unbounded: the client never stops reading
// (responses would stall) because a subscriber is slow. The returned
// function unsubscribes after fn has received every event already read;
// fn must not call it.
func (c *Client) Subscribe(fn func(Event)) (unsubscribe func()) {
	s := &subscriber{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	c.mu.Lock()
	if c.err != nil { // the connection is over: nothing will come
		c.mu.Unlock()
		s.stop()
		return func() { <-s.done }
	}
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			delete(c.subs, s)
			c.mu.Unlock()
			s.stop()
		})
		<-s.done
	}
}

type subscriber struct {
	fn   func(Event)
	wake chan struct{}
	done chan struct{}

	mu        sync.Mutex
	queue     []item
	stopped   bool
	delivered uint64        // seq of the last event fn returned from
	progress  chan struct{} // closed when delivered moves; made by a waiter
}

// item is an event and its place in the client's stream.
type item struct {
	seq uint64
	e   Event
}

func (s *subscriber) push(seq uint64, e Event) {
	s.mu.Lock()
	s.queue = append(s.queue, item{seq, e})
	s.mu.Unlock()
	s.signal()
}

// waitDelivered waits until fn has returned from event seq (or the
// subscriber has ended).
func (s *subscriber) waitDelivered(ctx context.Context, seq uint64) error {
	for {
		s.mu.Lock()
		if s.delivered >= seq {
			s.mu.Unlock()
			return nil
		}
		if s.progress == nil {
			s.progress = make(chan struct{})
		}
		ch := s.progress
		s.mu.Unlock()
		select {
		case <-ch:
		case <-s.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *subscriber) markDelivered(seq uint64) {
	s.mu.Lock()
	s.delivered = seq
	if s.progress != nil {
		close(s.progress)
		s.progress = nil
	}
	s.mu.Unlock()
}

// stop lets the subscriber deliver what is queued and end.
func (s *subscriber) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.signal()
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) run() {
	defer close(s.done)
	var batch []item
	for range s.wake {
		s.mu.Lock()
		batch, s.queue = s.queue, batch[:0]
		stopped := s.stopped
		s.mu.Unlock()
		for _, it := range batch {
			s.fn(it.e)
			s.markDelivered(it.seq)
		}
		clear(batch)
		if stopped {
			s.mu.Lock()
			left := len(s.queue)
			s.mu.Unlock()
			if left == 0 {
				return
			}
			s.signal()
		}
	}
}
