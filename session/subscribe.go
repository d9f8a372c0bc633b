package session

import (
	"context"
	"sync"

	"github.com/rally-agent/rally/llm"
)

// subscriberBuffer is how many events one subscriber may fall behind
// before the session waits for it. A slow subscriber delays the others by
// at most this much.
const subscriberBuffer = 1024

// Subscribe registers fn for every event from now on, delivered in order on
// a goroutine of its own behind a bounded buffer. The returned function
// unsubscribes after fn has received every event already emitted, so a
// caller that unsubscribes after Prompt returned has seen the whole run. fn
// must not call the unsubscribe function itself.
func (s *Session) Subscribe(fn func(Event)) (unsubscribe func()) { return s.Watch(fn).Close }

// Watch is Subscribe for a consumer that orders its own output with the
// events (the RPC server answers a command only after the events before
// it): the Subscription can wait for fn to catch up.
func (s *Session) Watch(fn func(Event)) *Subscription { return s.hub.subscribe(fn) }

// Subscription is one subscriber of a session's events.
type Subscription struct {
	h    *hub
	ch   chan item
	done chan struct{}
	once sync.Once
}

// item is an event, or a Sync waiting for the events before it.
type item struct {
	e    Event
	sync chan struct{}
}

// Sync waits until fn has returned from every event emitted before Sync
// was called. It must not be called from fn.
func (sub *Subscription) Sync(ctx context.Context) error {
	ch := make(chan struct{})
	sub.h.mu.Lock()
	if _, ok := sub.h.subs[sub]; !ok {
		sub.h.mu.Unlock()
		<-sub.done // closed: Close delivers everything first
		return nil
	}
	sub.ch <- item{sync: ch}
	sub.h.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close unsubscribes after fn has received every event already emitted. It
// must not be called from fn; a second call does nothing.
func (sub *Subscription) Close() {
	sub.once.Do(func() {
		sub.h.mu.Lock()
		delete(sub.h.subs, sub)
		close(sub.ch)
		sub.h.mu.Unlock()
	})
	<-sub.done
}

// hub delivers events in order to every subscriber, each on its own
// goroutine behind a bounded queue.
type hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (h *hub) subscribe(fn func(Event)) *Subscription {
	sub := &Subscription{h: h, ch: make(chan item, subscriberBuffer), done: make(chan struct{})}
	go func() {
		defer close(sub.done)
		for it := range sub.ch {
			if it.sync != nil {
				close(it.sync)
				continue
			}
			fn(it.e)
		}
	}()
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*Subscription]struct{}{}
	}
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

// emit sends e to every subscriber. The message in e is snapshotted first:
// the stream keeps changing its live message after emit returns.
func (h *hub) emit(e Event) {
	if e.Message != nil {
		e.Message = e.Message.Clone()
		if e.Assistant != nil {
			a := *e.Assistant
			a.Partial = e.Message
			e.Assistant = &a
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.ch <- item{e: e}
	}
}

// cloneAll copies a message list, for events that carry several.
func cloneAll(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i := range ms {
		out[i] = *ms[i].Clone()
	}
	return out
}
