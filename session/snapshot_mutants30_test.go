package session

import (
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llm"
)

// TestSnapshotOfOneBlock: a snapshot of a streamed answer of one block,
// nearly every one, costs two allocations, the snapshot and the Event
// interface's box of its two pointers: its content uses the snapshot's own
// one-block array. Mutant caught (loan.go:32, alive in
// this round's diff run): the nil test negated, so the content slice was
// a second allocation for every delta a keeping subscriber got. Run alone
// (proctest.Alone), since it counts the process's allocations.
func TestSnapshotOfOneBlock(t *testing.T) {
	if !proctest.Alone(t) {
		return
	}
	msg := &llm.Message{Role: llm.Assistant, Content: []llm.Content{{Type: "text", Text: "hello"}}}
	u := MessageUpdateEvent{Message: msg, Assistant: &llm.Event{}}
	var sink Event
	if n := testing.AllocsPerRun(200, func() { sink = snapshotUpdate(u) }); n != 2 {
		t.Errorf("%v allocations a snapshot, want 2", n)
	}
	got := sink.(MessageUpdateEvent)
	if len(got.Message.Content) != 1 || got.Message.Content[0].Text != "hello" || &got.Message.Content[0] == &msg.Content[0] {
		t.Errorf("snapshot content %+v, want a copy of the one block", got.Message.Content)
	}
}
