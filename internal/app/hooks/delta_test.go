//go:build unix

package hooks

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// growing returns n message_update events of one answer that grows by a
// word each, as a stream delivers them: every event's message is the
// partial answer so far.
func growing(n int) []Event {
	msg := &llm.Message{Role: llm.Assistant, Content: []llm.Content{llm.Text("")}}
	var text strings.Builder
	events := make([]Event, n)
	for i := range events {
		text.WriteString("word ")
		msg.Content[0].Text = text.String()
		events[i] = session.MessageUpdateEvent{Message: msg, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "word ", Partial: msg}}
	}
	return events
}

// TestMessageUpdateDeltaForm: a hook's input for a message_update is the
// delta form, whose size does not grow with the answer; before, each line
// carried the whole partial message twice.
func TestMessageUpdateDeltaForm(t *testing.T) {
	events := growing(20000)
	last := Encode(events[len(events)-1])
	want := `{"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"word "},"type":"message_update"}` + "\n"
	if string(last) != want {
		t.Fatalf("line of %d bytes:\n%.300s\nwant %s", len(last), last, want)
	}
	// The other events keep their full form.
	end := Encode(session.MessageEndEvent{Message: events[0].(session.MessageUpdateEvent).Message})
	if !bytes.Contains(end, []byte(`"message":{`)) {
		t.Errorf("message_end line %s lacks its message", end)
	}
}

// BenchmarkSlowHookDeltas is a stream of 20,000 and 50,000 deltas with a
// hook on message_update that never keeps up: what Handle costs the
// session's subscription for the whole answer. With the full form it was
// quadratic (1.5–3.3 s for 20k, 10 s for 50k end to end).
func BenchmarkSlowHookDeltas(b *testing.B) {
	stuck := settings.Hook{On: []string{string(session.MessageUpdate)}, Command: []string{"sh", "-c", "sleep 30"}, TimeoutMs: 60000}
	for _, n := range []int{20000, 50000} {
		events := growing(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := New(Config{Hooks: []settings.Hook{stuck}, Env: []string{"PATH=/usr/bin:/bin"}})
			defer r.Close(context.Background())
			for b.Loop() {
				for _, e := range events {
					r.Handle(Source{}, e)
				}
			}
		})
	}
}
