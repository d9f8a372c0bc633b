package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/tool"
)

func user(text string) llm.Message {
	return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}
}

func collect(evs *[]Event) func(Event) { return func(e Event) { *evs = append(*evs, e) } }

func TestLoopRunsToolsThenAnswers(t *testing.T) {
	dir := t.TempDir()
	cfg := &Config{Provider: &sim.Model{Delay: -1}, Model: sim.Info(), Tools: tool.Builtin(dir)}
	var evs []Event
	out, err := cfg.Run(context.Background(), nil, Options{Prompt: []llm.Message{user("run echo hi")}}, collect(&evs))
	if err != nil || out.CallErr != nil {
		t.Fatal(err, out.CallErr)
	}
	// user, assistant (tool call), tool result, assistant (report)
	if len(out.Added) != 4 || out.Added[2].Role != llm.ToolResult || out.Added[3].StopReason != llm.Stop {
		t.Fatalf("added %+v", out.Added)
	}
	var order []EventType
	for _, e := range evs {
		if e.Kind() != MessageUpdate {
			order = append(order, e.Kind())
		}
	}
	want := []EventType{AgentStart, TurnStart, MessageStart, MessageEnd, MessageStart, MessageEnd,
		ToolExecutionStart, ToolExecutionEnd, MessageStart, MessageEnd, TurnEnd,
		TurnStart, MessageStart, MessageEnd, TurnEnd, AgentEnd}
	if len(order) != len(want) {
		t.Fatalf("events %v\nwant   %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("event %d is %s, want %s\n%v", i, order[i], want[i], order)
		}
	}
}

// loopy always calls a tool.
type loopy struct{}

func (loopy) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	done := false
	return llm.NewStream(llm.Message{Role: llm.Assistant}, func(b *llm.Builder) error {
		if done {
			return nil
		}
		done = true
		b.ToolCall("0", "c", "nope", `{}`)
		b.ToolCall("1", "d", "boom", `{}`)
		b.Finish(llm.Stop)
		return nil
	}, nil), nil
}

func TestMaxTurnsAndBadTools(t *testing.T) {
	boom := tool.Func{Def: llm.Tool{Name: "boom"}, Fn: func(context.Context, json.RawMessage) (tool.Result, error) { panic("kaboom") }}
	cfg := &Config{Provider: loopy{}, MaxTurns: 2, Tools: []tool.Tool{boom}}
	var evs []Event
	out, err := cfg.Run(context.Background(), []llm.Message{user("go")}, Options{}, collect(&evs))
	if !errors.Is(err, ErrMaxTurns) {
		t.Fatalf("err %v, want ErrMaxTurns", err)
	}
	var results []llm.Message
	for _, m := range out.Added {
		if m.Role == llm.ToolResult {
			results = append(results, m)
		}
	}
	if len(results) != 4 || !results[0].IsError || !results[1].IsError {
		t.Fatalf("results %+v", results)
	}
	if got := results[0].TextOf(); got != `unknown tool "nope"` {
		t.Errorf("unknown tool result %q", got)
	}
	if got := results[1].TextOf(); got != "boom: internal error: kaboom" {
		t.Errorf("panic result %q", got)
	}
	if evs[len(evs)-1].Kind() != AgentEnd {
		t.Errorf("last event %s", evs[len(evs)-1].Kind())
	}
}

func TestSteeringSkipsRemainingTools(t *testing.T) {
	ran := 0
	count := tool.Func{Def: llm.Tool{Name: "nope"}, Fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		ran++
		return tool.Result{Content: []llm.Content{llm.Text("ok")}}, nil
	}}
	steered := false
	cfg := &Config{Provider: loopy{}, MaxTurns: 1, Tools: []tool.Tool{count}, Steering: func() []llm.Message {
		if steered {
			return nil
		}
		steered = true
		return []llm.Message{user("stop that")}
	}}
	out, _ := cfg.Run(context.Background(), []llm.Message{user("go")}, Options{}, func(Event) {})
	if ran != 1 {
		t.Errorf("tool ran %d times, want 1 (the second is skipped)", ran)
	}
	last := out.Added[len(out.Added)-1]
	if last.Role != llm.User || last.TextOf() != "stop that" {
		t.Errorf("last added %+v, want the steering message", last)
	}
}

// TestPause: Pause is never asked before a run's first call; asked before
// the next one with the context that call would send, true ends the run
// there with the tool results in and no further call.
func TestPause(t *testing.T) {
	var asked []int
	cfg := &Config{Provider: loopy{}, Pause: func(convo []llm.Message) bool {
		asked = append(asked, len(convo))
		return len(asked) == 2
	}}
	var evs []Event
	out, err := cfg.Run(context.Background(), []llm.Message{user("go")}, Options{}, collect(&evs))
	if err != nil || !out.Paused {
		t.Fatalf("err %v, paused %v", err, out.Paused)
	}
	// user, then (call, 2 results) per turn: 4 messages before the second
	// call, 7 before the third.
	if len(asked) != 2 || asked[0] != 4 || asked[1] != 7 {
		t.Errorf("asked with contexts of %v messages, want [4 7]", asked)
	}
	if last := out.Added[len(out.Added)-1]; last.Role != llm.ToolResult {
		t.Errorf("paused run ends with %v, want the tool results", last.Role)
	}
	if evs[len(evs)-1].Kind() != AgentEnd {
		t.Errorf("last event %s", evs[len(evs)-1].Kind())
	}
}
