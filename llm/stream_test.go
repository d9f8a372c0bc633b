package llm

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// script returns a fill function that plays steps, one per call.
func script(steps ...func(b *Builder) error) func(*Builder) error {
	i := 0
	return func(b *Builder) error {
		if i >= len(steps) {
			return io.EOF
		}
		i++
		return steps[i-1](b)
	}
}

func types(t *testing.T, s *Stream) []EventType {
	t.Helper()
	var got []EventType
	for {
		e, err := s.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Type)
	}
}

func TestStreamAssembles(t *testing.T) {
	s := NewStream(Message{Role: Assistant, Provider: "p"}, script(
		func(b *Builder) error { b.Thinking("0", "hmm"); return nil },
		func(b *Builder) error { b.Text("1", "Hel"); b.Text("1", "lo"); return nil },
		func(b *Builder) error { b.ToolCall("t0", "call_1", "read", `{"path":`); return nil },
		func(b *Builder) error { b.ToolCall("t0", "", "", `"a.txt"}`); return nil },
		func(b *Builder) error { b.Usage(Usage{Input: 10, Output: 5}); b.Finish(Stop); return nil },
	), nil)
	want := []EventType{EventStart, EventThinkingStart, EventThinkingDelta, EventTextStart, EventTextDelta, EventTextDelta,
		EventToolCallStart, EventToolCallDelta, EventToolCallDelta, EventThinkingEnd, EventTextEnd, EventToolCallEnd, EventDone}
	if diff := cmp.Diff(want, types(t, s)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	m := s.Message()
	if m.StopReason != ToolUse || m.TextOf() != "Hello" || m.Usage.TotalTokens != 15 {
		t.Errorf("message: stop %q text %q usage %+v", m.StopReason, m.TextOf(), m.Usage)
	}
	calls := m.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "call_1" || string(calls[0].Arguments) != `{"path":"a.txt"}` {
		t.Errorf("tool calls: %+v", calls)
	}
}

func TestStreamTruncated(t *testing.T) {
	s := NewStream(Message{Role: Assistant}, script(func(b *Builder) error { b.Text("0", "partial"); return nil }), nil)
	got := types(t, s)
	if got[len(got)-1] != EventError {
		t.Fatalf("last event %v, want error", got[len(got)-1])
	}
	m := s.Message()
	if m.StopReason != Error || m.TextOf() != "partial" {
		t.Errorf("stop %q text %q", m.StopReason, m.TextOf())
	}
	_, err := Collect(NewStream(Message{}, script(), nil))
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("Collect error %v, want ErrTruncated", err)
	}
	if v := Classify(err); v.Class.String() != "transient" {
		t.Errorf("truncated stream classified %v", v.Class)
	}
}

func TestBadToolArguments(t *testing.T) {
	s := NewStream(Message{}, script(func(b *Builder) error {
		b.ToolCall("0", "c", "bash", `{"command": "ls`)
		b.ToolCall("1", "d", "bash", ``)
		b.Finish("")
		return nil
	}), nil)
	m, err := Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	// Broken arguments are kept as the text that came, a JSON string (the
	// agent answers such a call with an error); none at all are {}.
	want := map[string]string{"c": `"{\"command\": \"ls"`, "d": `{}`}
	for _, c := range m.ToolCalls() {
		if string(c.Arguments) != want[c.ID] {
			t.Errorf("call %s arguments %s, want %s", c.ID, c.Arguments, want[c.ID])
		}
	}
}

func TestMessageJSON(t *testing.T) {
	var m Message
	if err := m.UnmarshalJSON([]byte(`{"role":"user","content":"hi","timestamp":1}`)); err != nil {
		t.Fatal(err)
	}
	if m.TextOf() != "hi" {
		t.Errorf("string content: %+v", m)
	}
	if err := m.UnmarshalJSON([]byte(`{"role":"user","content":42}`)); err == nil {
		t.Error("numeric content accepted")
	}
	b, _ := Message{Role: ToolResult, ToolCallID: "c"}.MarshalJSON()
	if string(b) != `{"role":"toolResult","content":[],"toolCallId":"c","timestamp":0,"isError":false}` {
		t.Errorf("tool result JSON: %s", b)
	}
}
