package session

import (
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestAnswerLoans: an answer with n deltas in flight at once (a fast
// stream, its subscriber n behind) costs about one allocation a delta,
// each loan's box, plus a slab every loanSlab loans and the queue's
// growth; a loan made by itself cost two. Once the answer is over the
// subscription keeps its keptLoans own loans, holding nothing of the
// answer, and no slab. The test drives the subscription from its own
// goroutine (no deliver goroutine), so the counts are the script's, and
// runs alone in a child process: MemStats counts the whole process.
func TestAnswerLoans(t *testing.T) {
	if !proctest.Alone(t) {
		return
	}
	const n = 500 // under subscriberBuffer: pushLoan never waits
	sub := newSubscription(&hub{}, func(Event) {}, true, nil, nil)
	u, ended := aDelta()
	var b batch
	answer := func() {
		for range n {
			sub.pushLoan(u, true)
		}
		sub.push(item{e: ended}, false)
		for {
			if k, _ := sub.pass(&b); k == 0 {
				break
			}
		}
	}
	answer() // makes the own loans
	// The boxes of the loans past the own ones, their slabs (one per 16
	// loans or fewer), and the queue growing to n+1 items (its buffers
	// are given back after an answer).
	const budget = (n - keptLoans) + (n-keptLoans)/16 + 10
	got := testing.AllocsPerRun(5, answer)
	t.Logf("an answer with %d deltas in flight: %v allocations (budget %d)", n, got, budget)
	if got > budget {
		t.Errorf("an answer with %d deltas in flight made %v allocations, want at most %d", n, got, budget)
	}
	kept := 0
	for l := sub.loans.spare; l != nil; l = l.next {
		kept++
		if !l.own || len(l.snap.msg.Content) != 0 || l.snap.ev.Delta != "" || l.snap.msg.Usage != nil {
			t.Errorf("after the answer, a spare loan (own %v) holds %d content blocks, delta %q, usage %v", l.own, len(l.snap.msg.Content), l.snap.ev.Delta, l.snap.msg.Usage)
		}
	}
	if kept != keptLoans || sub.loans.slab != nil {
		t.Errorf("after the answer, %d spare loans and a slab of %d left: want %d and none", kept, len(sub.loans.slab), keptLoans)
	}
}
