package session

import (
	"testing"

	"github.com/rally-agent/rally/llm"
)

// A step of a delivery script is a count of streamed updates to push, or
// one of these.
const (
	onePass = 0  // take the queue and deliver it
	msgEnd  = -1 // push the answer's message_end
)

// TestBatchKeptThroughAnAnswer drives a subscription's queue and its
// delivering side from the test's goroutine alone (no deliver goroutine,
// so the order of pushes and passes is the script's, whatever the
// scheduler or GOMAXPROCS): reads of hundreds of deltas alternating with
// reads of a few, some pushed while the other buffer is out (the parser
// goes on while the subscriber writes). Once the answer's first bursts
// have sized both buffers, the rest of it must grow neither: each growth
// is an allocation append makes, which the rule that gave a buffer back
// after a small pass made about nine times a burst. And once the answer
// is over, an idle subscription must hold neither large buffer.
func TestBatchKeptThroughAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		warm   []int // sizes both buffers
		steady []int // must grow neither
	}{
		{"bursts and lulls", []int{200, onePass, 200, onePass, onePass},
			[]int{3, onePass, onePass, 200, onePass, onePass, 1, onePass, 200, onePass, 5, onePass, onePass, onePass, 200, onePass, onePass}},
		{"overlapping reads", []int{200, onePass, 200, onePass, onePass},
			[]int{2, onePass, 200, onePass, 4, onePass, 200, onePass, 1, onePass, onePass, 150, onePass, 50, onePass, onePass}},
		{"one delta a read", []int{200, onePass, 200, onePass, onePass},
			[]int{1, onePass, onePass, 1, onePass, onePass, 1, onePass, 200, onePass, onePass}},
	} {
		for _, loaned := range []bool{true, false} {
			name := tc.name + "/watch"
			if loaned {
				name = tc.name + "/loaned"
			}
			t.Run(name, func(t *testing.T) {
				delivered := 0
				sub := newSubscription(&hub{}, func(Event) { delivered++ }, loaned, nil, nil)
				u, ended := aDelta()
				var boxed Event = u // once: a box is an allocation
				var b batch
				pushed, grows := 0, 0
				run := func(script []int) {
					for _, n := range script {
						switch n {
						case onePass:
							sub.pass(&b)
						case msgEnd:
							sub.push(item{e: ended}, false)
							pushed++
						default:
							for range n {
								c := cap(sub.queue)
								if loaned {
									sub.pushLoan(u, true)
								} else {
									sub.push(item{e: boxed}, true)
								}
								if cap(sub.queue) != c {
									grows++
								}
							}
							pushed += n
						}
					}
				}
				run(tc.warm)
				grows = 0
				run(tc.steady)
				if grows != 0 {
					t.Errorf("the queue grew %d times after the answer's first bursts: a buffer sized for them was given back mid-answer", grows)
				}
				run([]int{msgEnd, onePass, onePass})
				if delivered != pushed || sub.pending != 0 {
					t.Fatalf("delivered %d of %d events, %d pending", delivered, pushed, sub.pending)
				}
				if q, d := cap(sub.queue), cap(b.items); q > keptBatch || d > keptBatch {
					t.Errorf("idle after the answer, the subscription holds buffers of %d and %d items: want at most %d", q, d, keptBatch)
				}
			})
		}
	}
}

// aDelta is a streamed update, the way a loan or a snapshot copies it,
// and its answer's message_end, boxed once (a box is an allocation).
func aDelta() (MessageUpdateEvent, Event) {
	msg := &llm.Message{Role: llm.Assistant, Content: []llm.Content{{Type: "text", Text: "w"}}}
	u := MessageUpdateEvent{Message: msg, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "w", Partial: msg}}
	return u, MessageEndEvent{Message: msg}
}

// TestKeep is the rule by itself: a large buffer stays while a stream
// goes on, and only then.
func TestKeep(t *testing.T) {
	for _, tc := range []struct {
		c         int
		streaming bool
		want      bool
	}{
		{0, false, true},
		{keptBatch, false, true},
		{keptBatch + 1, false, false},
		{1024, false, false},
		{keptBatch + 1, true, true},
		{1024, true, true},
	} {
		if got := keep(tc.c, tc.streaming); got != tc.want {
			t.Errorf("keep(%d, streaming %v) = %v, want %v", tc.c, tc.streaming, got, tc.want)
		}
	}
}
