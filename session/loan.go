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
	next *loan // the next spare loan (loans.spare)
	// own: made by itself, one of the subscription's first keptLoans,
	// which it keeps for its life; the others come in slabs.
	own bool
}

// keptLoans is how many spare loans a subscription keeps once an answer
// is over: a burst may have needed a thousand, an idle session needs none.
const keptLoans = 4

// loanSlab is how many loans past keptLoans are made in one allocation. A
// fast stream has up to subscriberBuffer deltas in flight, each in a loan
// of its own, and the loans past keptLoans are let go at the end of each
// answer: made one by one, they were half the allocations of an answer's
// fan-out (the other half, a box each, cannot be shared). A slab costs
// the memory of its loans until all of them are let go, so it stays
// small.
const loanSlab = 32

// loans is what a loaned subscription keeps of its loans. It is made at
// the first loan, so a subscription never loaned (Subscribe, Watch: most
// of them) pays a pointer for it, not 40 bytes: a Subscription in the
// next size class cost every idle session 16 bytes
// (TestSubscriptionSizeClass).
type loans struct {
	spare *loan  // delivered and free again, a list through next
	slab  []loan // made and not yet taken
	owned int    // made by themselves
}

// takeLoan returns a spare loan, or a new one. The caller holds sub.mu.
func (sub *Subscription) takeLoan() *loan {
	if sub.loans == nil {
		sub.loans = new(loans)
	}
	ls := sub.loans
	if l := ls.spare; l != nil {
		ls.spare, l.next = l.next, nil
		return l
	}
	var l *loan
	if ls.owned < keptLoans {
		// Made alone, so that keeping it between answers keeps no slab.
		l = &loan{own: true}
		ls.owned++
	} else {
		if len(ls.slab) == 0 {
			ls.slab = make([]loan, loanSlab)
		}
		l = &ls.slab[0]
		ls.slab = ls.slab[1:]
	}
	l.box = MessageUpdateEvent{Message: &l.snap.msg, Assistant: &l.snap.ev}
	return l
}

// giveBack makes l, delivered, a spare loan. The caller holds sub.mu.
func (sub *Subscription) giveBack(l *loan) {
	l.next = sub.loans.spare
	sub.loans.spare = l
}

// trimLoans lets go of the spare loans made in slabs, and of what the own
// ones still point to (the answer's text, its usage), so an idle
// subscription holds nothing of the last answer. A slab loan still in
// flight (the next answer began in the same pass) is let go at the next
// trim. The caller holds sub.mu.
func (sub *Subscription) trimLoans() {
	ls := sub.loans
	if ls == nil {
		return // never loaned
	}
	var kept *loan
	for l := ls.spare; l != nil; {
		next := l.next
		l.next = nil
		if l.own {
			content := l.snap.content
			clear(content[:cap(content)])
			l.snap = updateSnap{content: content[:0]}
			l.next, kept = kept, l
		}
		l = next
	}
	ls.spare = kept
	ls.slab = nil
}
