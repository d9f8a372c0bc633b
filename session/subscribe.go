package session

import (
	"sync"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
)

// Event is an event of a session: the agent loop's, and the session's own
// (retries, compaction, settling).
type Event = agent.Event

// subscriberBuffer is how many events one subscriber may fall behind
// before the session waits for it. A slow subscriber delays the others by
// at most this much.
const subscriberBuffer = 1024

// hub delivers events in order to every subscriber, each on its own
// goroutine behind a bounded queue.
type hub struct {
	mu   sync.Mutex
	subs map[*sub]struct{}
}

type sub struct {
	ch   chan Event
	done chan struct{}
}

// Subscribe registers fn to receive every event from now on, in order, on
// a goroutine of its own. The returned function unsubscribes: it waits
// until fn has received every event already sent to it, so a caller that
// unsubscribes after Prompt returned has seen the whole run.
func (h *hub) subscribe(fn func(Event)) (unsubscribe func()) {
	s := &sub{ch: make(chan Event, subscriberBuffer), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for e := range s.ch {
			fn(e)
		}
	}()
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*sub]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, s)
			close(s.ch)
			h.mu.Unlock()
			<-s.done
		})
	}
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
		s.ch <- e
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
