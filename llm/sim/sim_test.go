package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

var tools = []llm.Tool{{Name: "read"}, {Name: "bash"}}

func ask(t *testing.T, m *Model, req *llm.Request) *llm.Message {
	t.Helper()
	s, err := m.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := llm.Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func user(text string) llm.Message {
	return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}
}

func TestAnswers(t *testing.T) {
	m := &Model{Delay: -1}
	tests := []struct {
		name     string
		req      llm.Request
		text     string
		tool     string
		argsPart string
	}{
		{"about rally", llm.Request{Messages: []llm.Message{user("What does rally do?")}}, "survive provider failures", "", ""},
		{"read file", llm.Request{Messages: []llm.Message{user("please read README.md")}, Tools: tools}, "Let me", "read", `"path":"README.md"`},
		{"run command", llm.Request{Messages: []llm.Message{user("run ls -la")}, Tools: tools}, "Let me", "bash", `"command":"ls -la"`},
		{"no tool offered", llm.Request{Messages: []llm.Message{user("run ls")}}, "You asked", "", ""},
		{"tool result", llm.Request{Messages: []llm.Message{user("run ls"), {Role: llm.ToolResult, ToolName: "bash", Content: []llm.Content{llm.Text("a\nb")}}}}, "returned 2 line(s)", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ask(t, m, &tt.req)
			if !strings.Contains(got.TextOf(), tt.text) {
				t.Errorf("text %q does not contain %q", got.TextOf(), tt.text)
			}
			calls := got.ToolCalls()
			if tt.tool == "" {
				if len(calls) != 0 || got.StopReason != llm.Stop {
					t.Errorf("unexpected tool calls %+v, stop %q", calls, got.StopReason)
				}
				return
			}
			if len(calls) != 1 || calls[0].Name != tt.tool || !strings.Contains(string(calls[0].Arguments), tt.argsPart) || got.StopReason != llm.ToolUse {
				t.Errorf("calls %+v stop %q, want %s with %s", calls, got.StopReason, tt.tool, tt.argsPart)
			}
		})
	}
}

func TestDeterministicWithUsage(t *testing.T) {
	m := &Model{Delay: -1}
	req := &llm.Request{Model: Info(), Messages: []llm.Message{user("Tell me about the weather on Mars")}}
	a, b := ask(t, m, req), ask(t, m, req)
	if a.TextOf() != b.TextOf() {
		t.Errorf("not deterministic:\n%q\n%q", a.TextOf(), b.TextOf())
	}
	if a.Usage == nil || a.Usage.Input == 0 || a.Usage.Output == 0 {
		t.Errorf("usage %+v", a.Usage)
	}
}

func TestOverflow(t *testing.T) {
	info := Info()
	info.ContextWindow = 10
	_, err := (&Model{}).Stream(context.Background(), &llm.Request{Model: info, Messages: []llm.Message{user(strings.Repeat("long ", 40))}})
	if v := llm.Classify(err); v.Class != retry.ContextOverflow {
		t.Fatalf("err %v classified %v, want context overflow", err, v.Class)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := (&Model{Delay: time.Hour}).Stream(ctx, &llm.Request{Messages: []llm.Message{user("hello there")}})
	if err != nil {
		t.Fatal(err)
	}
	for e, err := s.Next(); err == nil && e.Type != llm.EventTextDelta; e, err = s.Next() {
	}
	cancel()
	msg, err := llm.Collect(s)
	if !errors.Is(err, context.Canceled) || msg.StopReason != llm.Aborted {
		t.Fatalf("err %v stop %q, want canceled/aborted", err, msg.StopReason)
	}
}
