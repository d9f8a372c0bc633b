package session

// batch is what the delivering goroutine takes a subscription's queue
// into: deliver swaps the two slices, so they take turns as queue and
// batch, and each keeps its capacity for the next turn.
//
// During an answer, reads that bring hundreds of deltas alternate with
// reads that bring a few. Giving a large buffer back after a small pass
// (as a pass a quarter full once did) had append grow it again, a dozen
// allocations, at the next burst, many times an answer: about 0.01
// allocations per delta on the RPC path. So a buffer sized for a stream
// is kept while the stream goes on, and given back once it is over (its
// message_end, or any other event after the updates), so an idle
// subscription holds neither.
type batch struct {
	items []item
	// streaming: the last event delivered was a streamed update, and more
	// are coming.
	streaming bool
}

// keptBatch is the capacity a buffer keeps whatever the stream does:
// the few events around a turn need no more.
const keptBatch = 64

// sawLast notes the events just delivered: a stream goes on while the
// last of them is a streamed update, and any other event ends it. A Sync
// has no event, and says nothing of the stream.
func (b *batch) sawLast(items []item) {
	for i := len(items) - 1; i >= 0; i-- {
		switch items[i].e.(type) {
		case nil:
			continue
		case MessageUpdateEvent, ToolExecutionUpdateEvent:
			b.streaming = true
		default:
			b.streaming = false
		}
		return
	}
}

// recycle readies b for the next take once a pass (or a take that found
// nothing) is over: its buffer stays, emptied, unless it grew past
// keptBatch for a stream that is now over.
func (b *batch) recycle() {
	clear(b.items) // let the delivered events go
	if keep(cap(b.items), b.streaming) {
		b.items = b.items[:0]
	} else {
		b.items = nil
	}
}

// keep is the rule recycle applies: a buffer of capacity c stays while a
// stream goes on, or when it is small.
func keep(c int, streaming bool) bool { return streaming || c <= keptBatch }
