package session

import "github.com/rally-agent/rally/llm"

// A streamed delta is the one event a session emits thousands of times a
// second, so its snapshot is built to cost little: one allocation for a
// subscriber that may keep events (Subscribe), none in steady state for one
// that does not (WatchLoaned), whose snapshots are recycled once its
// function returned.

// updateSnap is the snapshot of one message_update: the message (its
// content slice copied, its strings shared, as they never change), its
// usage and the stream event, in one allocation. A message of one block,
// nearly every streamed answer, needs no second one.
type updateSnap struct {
	msg     llm.Message
	ev      llm.Event
	usage   llm.Usage
	content []llm.Content // msg.Content's storage, reused by a loan
	one     [1]llm.Content
}

// loanable reports whether e is a message_update a loan can copy: one
// with both a message and a stream event, as the agent loop emits them.
func loanable(e Event) (MessageUpdateEvent, bool) {
	u, ok := e.(MessageUpdateEvent)
	return u, ok && u.Message != nil && u.Assistant != nil
}

// fill makes s a copy of u.
func (s *updateSnap) fill(u MessageUpdateEvent) {
	if s.content == nil {
		s.content = s.one[:0]
	}
	content := append(s.content[:0], u.Message.Content...)
	s.content = content
	s.msg = *u.Message
	s.msg.Content = content
	if u.Message.Usage != nil {
		s.usage = *u.Message.Usage
		s.msg.Usage = &s.usage
	}
	s.ev = *u.Assistant
	s.ev.Partial = &s.msg
}

// snapshotUpdate is u copied into a snapshot of its own, for subscribers
// that may keep it.
func snapshotUpdate(u MessageUpdateEvent) Event {
	s := &updateSnap{}
	s.fill(u)
	return MessageUpdateEvent{Message: &s.msg, Assistant: &s.ev}
}

// loan is a recycled snapshot with its event boxed once: the box holds
// pointers to snap's fields, which a later update overwrites in place.
type loan struct {
	snap updateSnap
	box  Event
}

// keptLoans is how many spare loans a subscription keeps once an answer
// is over: a burst may have needed a thousand, an idle session needs none.
const keptLoans = 4

// takeLoan returns a spare loan, or a new one. The caller holds sub.mu.
func (sub *Subscription) takeLoan() *loan {
	if n := len(sub.spare); n > 0 {
		l := sub.spare[n-1]
		sub.spare[n-1] = nil
		sub.spare = sub.spare[:n-1]
		return l
	}
	l := &loan{}
	l.box = MessageUpdateEvent{Message: &l.snap.msg, Assistant: &l.snap.ev}
	return l
}

// trimLoans lets go of the spare loans beyond keptLoans, and of what the
// kept ones still point to (the answer's text, its usage), so an idle
// subscription holds nothing of the last answer. The caller holds sub.mu.
func (sub *Subscription) trimLoans() {
	if len(sub.spare) > keptLoans {
		clear(sub.spare[keptLoans:])
		sub.spare = sub.spare[:keptLoans:keptLoans]
	}
	for _, l := range sub.spare {
		content := l.snap.content
		clear(content[:cap(content)])
		l.snap = updateSnap{content: content[:0]}
	}
}
