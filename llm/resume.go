package llm

import (
	"context"
	"errors"
	"time"
)

// Ways a dropped stream is continued (Drop.Method).
const (
	// ResumeCursor replays the provider's stored response from the last
	// event seen (OpenAI Responses background mode, starting_after).
	ResumeCursor = "cursor"
	// ResumeContinuation asks the model to go on from the partial answer,
	// sent back as the last assistant message (continue_final_message).
	ResumeContinuation = "continuation"
)

// Drop is the failure of a stream that broke (a truncated body, an idle
// timeout, a reset connection) but that its provider can continue: the
// consumer of the stream may Reconnect instead of failing the message.
// A provider's fill returns it (wrapping the transport error) only for a
// stream it knows how to continue; everything else fails as before.
type Drop struct {
	// Err is the failure that broke the stream; the retry policy
	// classifies it.
	Err error
	// Method is ResumeCursor or ResumeContinuation.
	Method string
	// Cursor is where a cursor resume starts (the last sequence number
	// seen), for events and logs; "" for a continuation.
	Cursor string
	// At is when the stream broke, for the gap a resume reports.
	At time.Time
	// reconnect opens the continuation; the provider's fill reads from it
	// afterwards.
	reconnect func(ctx context.Context) error
}

// NewDrop returns the Drop of a stream that reconnect can continue.
func NewDrop(err error, method, cursor string, reconnect func(ctx context.Context) error) *Drop {
	return &Drop{Err: err, Method: method, Cursor: cursor, At: time.Now(), reconnect: reconnect}
}

func (d *Drop) Error() string { return d.Err.Error() }
func (d *Drop) Unwrap() error { return d.Err }

// Reconnect opens the continuation of the stream. On success the stream
// goes on where it broke; an error (classified like any call's) leaves
// it broken, and Reconnect may be called again.
func (d *Drop) Reconnect(ctx context.Context) error {
	if d.reconnect == nil {
		return d.Err
	}
	return d.reconnect(ctx)
}

// Resumer decides about a Drop: it waits (or not) and reconnects, and
// reports whether the stream goes on. It runs on the goroutine pulling
// the stream, between two events, so anything it emits is in order.
type Resumer func(d *Drop) bool

// OnDrop makes s ask r about a failure it can continue, instead of
// ending with it. Without one (the default) a Drop fails the stream like
// any error, so a caller that knows nothing of resuming sees no change.
func (s *Stream) OnDrop(r Resumer) { s.resume = r }

// waitResumed is resumed after telling the consumer that the stream
// waits (OnWait): the Resumer may wait long for a reconnect.
func (s *Stream) waitResumed(err error) bool {
	s.waits.Wait()
	return s.resumed(err)
}

// resumed reports that err is a Drop the stream's Resumer continued.
func (s *Stream) resumed(err error) bool {
	var d *Drop
	if s.resume == nil || !errors.As(err, &d) {
		return false
	}
	return s.resume(d)
}
