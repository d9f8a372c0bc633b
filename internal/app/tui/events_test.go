package tui

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

func TestTranslate(t *testing.T) {
	asst := &llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("hi")}}
	user := &llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("q")}}
	res := &tool.Result{Content: []llm.Content{llm.Text("a"), {Type: llm.ImageType, MimeType: "image/png"}, llm.Text("b")}}
	cases := []struct {
		e    session.Event
		want any
	}{
		{session.AgentStartEvent{}, runStartMsg{}},
		{session.AgentEndEvent{WillRetry: true}, nil},
		{session.AgentSettledEvent{}, settledMsg{}},
		{session.MessageStartEvent{Message: asst}, assistantStartMsg{}},
		{session.MessageStartEvent{Message: user}, nil},
		{session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "x"}}, deltaMsg{text: "x"}},
		{session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventThinkingDelta, Delta: "t"}}, deltaMsg{text: "t", thinking: true}},
		{session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventToolCallDelta, Delta: "{"}}, nil},
		{session.MessageEndEvent{Message: user}, messageEndMsg{msg: *user}},
		{session.MessageDiscardedEvent{Message: asst}, discardMsg{}},
		{session.ToolExecutionStartEvent{ToolCallID: "c1", ToolName: "bash", Args: json.RawMessage(`{"command":"ls"}`)}, toolStartMsg{id: "c1", name: "bash", args: `{"command":"ls"}`}},
		{session.ToolExecutionEndEvent{ToolCallID: "c1", ToolName: "bash", Result: res, IsError: true}, toolEndMsg{id: "c1", name: "bash", result: "a\n[image image/png]\nb", isError: true}},
		{session.AutoRetryStartEvent{Attempt: 2, MaxAttempts: 3, DelayMs: 4000, ErrorMessage: "503", ErrorClass: retry.Transient, SwitchedTo: "k2"},
			retryStartMsg{attempt: 2, max: 3, at: t0, until: t0.Add(4 * time.Second), err: "503", class: "transient", switchedTo: "k2"}},
		{session.AutoRetryEndEvent{Attempt: 3, FinalError: "boom"}, retryEndMsg{attempt: 3, finalError: "boom"}},
		{session.AutoRetryEndEvent{Attempt: 1, FinalError: "Retry cancelled"}, retryEndMsg{attempt: 1, finalError: "Retry cancelled", cancelled: true}},
		{session.AutoRetryEndEvent{Success: true, Attempt: 1}, retryEndMsg{success: true, attempt: 1}},
		{session.SessionErrorEvent{Op: "save message", ErrorMessage: "no space left on device"}, storeErrorMsg{op: "save message", err: "no space left on device"}},
		{session.CompactionStartEvent{Reason: "overflow"}, compactStartMsg{reason: "overflow"}},
		{session.CompactionEndEvent{Reason: "manual", Result: &session.CompactionResult{TokensBefore: 99}}, compactEndMsg{reason: "manual", tokensBefore: 99, done: true}},
		{session.CompactionEndEvent{Reason: "manual", Aborted: true}, compactEndMsg{reason: "manual", aborted: true}},
		{session.TurnStartEvent{}, nil},
	}
	for _, c := range cases {
		t.Run(string(c.e.Kind()), func(t *testing.T) {
			got := translate(c.e, t0)
			if c.want == nil {
				if got != nil {
					t.Fatalf("got %#v, want nothing", got)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestConfirmer(t *testing.T) {
	ran := 0
	echo := tool.Func{Def: llm.Tool{Name: "bash"}, Fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		ran++
		return tool.Result{Content: []llm.Content{llm.Text("ok")}}, nil
	}}
	other := tool.Func{Def: llm.Tool{Name: "read"}, Fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, nil
	}}
	c := NewConfirmer([]string{"bash"})
	ts := c.Wrap([]tool.Tool{echo, other})
	if _, plain := ts[1].(tool.Func); !plain {
		t.Fatal("read is not in tools.confirm but asks")
	}
	if got := NewConfirmer(nil).Wrap(ts[1:]); !reflect.DeepEqual(got, ts[1:]) {
		t.Fatal("an empty tools.confirm changed the tools")
	}
	// No UI connected: the answer is no, and the tool does not run.
	res, err := ts[0].Run(context.Background(), json.RawMessage(`{}`))
	if err != nil || !res.IsError || ran != 0 {
		t.Fatalf("without a UI: %v %+v, ran %d", err, res, ran)
	}
	for _, yes := range []bool{true, false} {
		c.connect(func(msg any) {
			q := msg.(confirmMsg)
			if q.name != "bash" || q.args != `{"command":"ls"}` {
				t.Errorf("asked %+v", q)
			}
			q.reply <- yes
		})
		before := ran
		res, err := ts[0].Run(context.Background(), json.RawMessage(`{"command":"ls"}`))
		if err != nil || res.IsError == yes || (ran > before) != yes {
			t.Fatalf("answer %v: %v %+v, ran %d", yes, err, res, ran-before)
		}
	}
	// A cancelled run does not wait for an answer.
	c.connect(func(any) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ts[0].Run(ctx, json.RawMessage(`{}`)); err == nil {
		t.Fatal("a cancelled call waited or ran")
	}
}
