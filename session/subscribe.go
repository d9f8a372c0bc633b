package session

import (
	"context"
	"slices"
	"sync"

	"github.com/rally-agent/rally/llm"
)

// subscriberBuffer is how many events one subscriber may fall behind
// before the session waits for it. A slow subscriber delays the others by
// at most this much. The queue grows to it on demand: an idle
// subscription holds no events, and most never hold more than a few.
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

// WatchLoaned is Watch for a consumer that is done with each event when fn
// returns (it encodes or copies what it needs): a message_update's Message
// and Assistant are loaned, valid only until fn returns, then reused for a
// later update. A streamed delta then costs its subscription no
// allocation. Every other event is fn's to keep, as with Watch.
func (s *Session) WatchLoaned(fn func(Event)) *Subscription { return s.hub.add(fn, true, nil, nil) }

// WatchBatched is WatchLoaned for a consumer that buffers what fn writes:
// idle is called on the delivering goroutine each time it has delivered
// every event queued and is about to wait for more, which is where such a
// consumer flushes. With a stream read from a connection (llm.Stream.OnWait)
// the deltas parsed from one read are delivered together and idle runs once
// for them, before the stream waits for the next read; nothing that was
// ready is ever held while the session waits.
func (s *Session) WatchBatched(fn func(Event), idle func()) *Subscription {
	return s.hub.add(fn, true, nil, idle)
}

// SubscribeTo is Subscribe for the events of the given kinds only; the
// others are never queued for fn. A subscriber waiting for one rare kind
// (a failed save) then costs a streamed delta nothing: no snapshot, no
// wake-up of its goroutine.
func (s *Session) SubscribeTo(kinds []EventType, fn func(Event)) (unsubscribe func()) {
	return s.hub.add(fn, false, slices.Clone(kinds), nil).Close
}

// Subscription is one subscriber of a session's events.
type Subscription struct {
	h    *hub
	fn   func(Event)
	wake chan struct{} // the delivering goroutine has work
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	room    sync.Cond // broadcast when pending falls below subscriberBuffer
	queue   []item    // not yet taken by the delivering goroutine
	pending int       // queued or taken but not yet delivered
	closed  bool
	loaned  bool   // message_updates are loaned (WatchLoaned)
	loans   *loans // made at the first loan (takeLoan)
	// held counts the deltas queued since the delivering goroutine was
	// last woken (see hub.hold).
	held int

	only []EventType // the kinds fn gets (SubscribeTo); nil is all
	idle func()      // called when the queue is drained (WatchBatched)
}

// item is an event, or a Sync waiting for the events before it.
type item struct {
	e    Event
	sync chan struct{}
	loan *loan // e's storage, free again once fn returned
}

// push queues it, waiting while the subscriber is subscriberBuffer behind.
// The caller holds the hub's lock, so events keep their order. A held
// item (a streamed delta, see hub.hold) does not wake the delivering
// goroutine unless maxHeld of them wait.
func (sub *Subscription) push(it item, hold bool) {
	sub.mu.Lock()
	for sub.pending >= subscriberBuffer {
		sub.room.Wait()
	}
	sub.queue = append(sub.queue, it)
	sub.pushed(hold)
}

// maxHeld is how many held deltas wake the delivering goroutine anyway: a
// read of a fast stream may hold hundreds, and delivering them while the
// parser goes on uses the second core. It is far below subscriberBuffer,
// where push would wait for a goroutine nothing woke.
const maxHeld = 128

// pushed counts the item just queued and wakes the delivering goroutine,
// unless the item is held. The caller holds sub.mu; pushed releases it.
func (sub *Subscription) pushed(hold bool) {
	sub.pending++
	if hold {
		if sub.held++; sub.held < maxHeld {
			sub.mu.Unlock()
			return
		}
	}
	sub.held = 0
	sub.mu.Unlock()
	sub.signal()
}

func (sub *Subscription) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// release wakes the delivering goroutine if deltas are held for it.
func (sub *Subscription) release() {
	sub.mu.Lock()
	held := sub.held > 0
	sub.held = 0
	sub.mu.Unlock()
	if held {
		sub.signal()
	}
}

// pushLoan queues a copy of u in a loan, waiting and holding like push.
func (sub *Subscription) pushLoan(u MessageUpdateEvent, hold bool) {
	sub.mu.Lock()
	for sub.pending >= subscriberBuffer {
		sub.room.Wait()
	}
	l := sub.takeLoan()
	l.snap.fill(u)
	sub.queue = append(sub.queue, item{e: l.box, loan: l})
	sub.pushed(hold)
}

// deliver hands queued items to fn, in order, until the subscription is
// closed and drained.
func (sub *Subscription) deliver() {
	defer close(sub.done)
	var b batch
	for range sub.wake {
		for {
			n, closed := sub.pass(&b)
			if n > 0 {
				continue
			}
			if sub.idle != nil {
				sub.idle()
			}
			if closed {
				return
			}
			break
		}
	}
}

// pass takes the queue into b and hands its items to fn, in order. It
// reports how many it took and whether the subscription was closed when
// it took them; a closed one has nothing more to come once a pass takes
// none.
func (sub *Subscription) pass(b *batch) (n int, closed bool) {
	sub.mu.Lock()
	b.items, sub.queue = sub.queue, b.items
	sub.held = 0 // taken: a release has nothing to wake
	closed = sub.closed
	sub.mu.Unlock()
	items := b.items
	for i := range items {
		if items[i].sync != nil {
			close(items[i].sync)
		} else {
			sub.fn(items[i].e)
		}
	}
	if len(items) > 0 {
		b.sawLast(items)
		sub.mu.Lock()
		for i := range items {
			if l := items[i].loan; l != nil {
				sub.giveBack(l)
			} else if _, ok := items[i].e.(MessageEndEvent); ok {
				sub.trimLoans() // the answer is over
			}
		}
		if sub.pending >= subscriberBuffer {
			sub.room.Broadcast()
		}
		sub.pending -= len(items)
		sub.mu.Unlock()
	}
	b.recycle()
	return len(items), closed
}

// Sync waits until fn has returned from every event emitted before Sync
// was called. It must not be called from fn.
func (sub *Subscription) Sync(ctx context.Context) error {
	ch := make(chan struct{})
	sub.h.mu.Lock()
	if !slices.Contains(sub.h.subs, sub) {
		sub.h.mu.Unlock()
		<-sub.done // closed: Close delivers everything first
		return nil
	}
	sub.push(item{sync: ch}, false)
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
		if i := slices.Index(sub.h.subs, sub); i >= 0 {
			sub.h.subs = slices.Delete(sub.h.subs, i, i+1)
		}
		sub.mu.Lock()
		sub.closed = true
		sub.mu.Unlock()
		sub.h.mu.Unlock()
		sub.signal()
	})
	<-sub.done
}

// hub delivers events in order to every subscriber, each on its own
// goroutine behind a bounded queue that grows on demand.
type hub struct {
	mu sync.Mutex
	// subs is a slice, not a set: there are one to three, and emit walks
	// them for every delta.
	subs []*Subscription
	// hold is set while the model's stream promises to call waiting
	// before it waits for more of its response: its deltas are then
	// queued without waking the subscribers, and waiting wakes them once
	// for all that one read brought. Any other event clears it (a new
	// stream, one that cannot promise, starts eager), and every one of
	// them wakes at once.
	hold bool
}

func (h *hub) subscribe(fn func(Event)) *Subscription { return h.add(fn, false, nil, nil) }

// add subscribes fn, its message_updates loaned or not, to the kinds of
// only (nil: all), with idle called when its queue is drained.
func (h *hub) add(fn func(Event), loaned bool, only []EventType, idle func()) *Subscription {
	sub := newSubscription(h, fn, loaned, only, idle)
	go sub.deliver()
	h.mu.Lock()
	h.subs = append(h.subs, sub)
	h.mu.Unlock()
	return sub
}

// newSubscription is a subscription of h not yet delivering (add starts
// its goroutine; a test may drive pass itself) nor in h's list.
func newSubscription(h *hub, fn func(Event), loaned bool, only []EventType, idle func()) *Subscription {
	sub := &Subscription{h: h, fn: fn, loaned: loaned, only: only, idle: idle, wake: make(chan struct{}, 1), done: make(chan struct{})}
	sub.room.L = &sub.mu
	return sub
}

// emit sends e to every subscriber. The message in e is snapshotted first:
// the stream keeps changing its live message after emit returns. A loaned
// subscription copies a message_update into a loan of its own; the others
// share one snapshot, made only if one of them is there.
func (h *hub) emit(e Event) {
	u, loan := loanable(e)
	k := e.Kind()
	var shared Event
	h.mu.Lock()
	defer h.mu.Unlock()
	hold := h.hold && k == MessageUpdate
	h.hold = hold
	for _, s := range h.subs {
		if s.only != nil && !slices.Contains(s.only, k) {
			continue
		}
		if loan && s.loaned {
			s.pushLoan(u, hold)
			continue
		}
		if shared == nil {
			shared = snapshot(e)
		}
		s.push(item{e: shared}, hold)
	}
}

// waiting is called by the run's model stream (llm.Stream.OnWait) before
// it waits for more of its response: the deltas held so far go to their
// subscribers now, and the ones the next read brings are held until the
// stream waits again.
func (h *hub) waiting() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold = true
	for _, s := range h.subs {
		s.release()
	}
}

// snapshot is e with its message copied, for the kinds that carry one.
func snapshot(e Event) Event {
	switch e := e.(type) {
	case MessageUpdateEvent:
		if e.Message != nil && e.Assistant != nil {
			return snapshotUpdate(e)
		}
		if e.Message != nil {
			e.Message = e.Message.Clone()
			if e.Assistant != nil {
				a := *e.Assistant
				a.Partial = e.Message
				e.Assistant = &a
			}
		}
		return e
	case MessageStartEvent:
		return MessageStartEvent{Message: e.Message.Clone()}
	case MessageEndEvent:
		return MessageEndEvent{Message: e.Message.Clone()}
	case MessageDiscardedEvent:
		return MessageDiscardedEvent{Message: e.Message.Clone()}
	case TurnEndEvent:
		e.Message = e.Message.Clone()
		return e
	}
	return e
}

// cloneAll copies a message list, for events that carry several.
func cloneAll(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i := range ms {
		out[i] = *ms[i].Clone()
	}
	return out
}
