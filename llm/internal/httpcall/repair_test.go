package httpcall

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
)

func TestRepair(t *testing.T) {
	call := func(id string) llm.Content {
		return llm.Content{Type: llm.ToolCallType, ID: id, Name: "bash", Arguments: json.RawMessage(`{}`)}
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.ToolResult, ToolCallID: id, ToolName: "bash", Content: []llm.Content{llm.Text("ok " + id)}}
	}
	answer := func(stop llm.StopReason, calls ...string) llm.Message {
		m := llm.Message{Role: llm.Assistant, StopReason: stop}
		for _, id := range calls {
			m.Content = append(m.Content, call(id))
		}
		return m
	}
	user := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("go")}}
	empty := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(" ")}}
	other := llm.Message{Role: "note", Content: []llm.Content{llm.Text("x")}}
	// nonBlank is a keep that leaves out messages without visible text or
	// calls, and roles it does not know, as a provider would.
	nonBlank := func(m *llm.Message) bool {
		return (m.Role == llm.User || m.Role == llm.Assistant) && (strings.TrimSpace(m.TextOf()) != "" || len(m.ToolCalls()) > 0)
	}
	tests := []struct {
		name string
		in   []llm.Message
		keep func(*llm.Message) bool
		id   func(string) string
		want string // role:id per message, "!" marking a stand-in
	}{
		{"whole", []llm.Message{user, answer(llm.ToolUse, "a"), result("a"), answer(llm.Stop)}, nil, nil,
			"user assistant(a) result:a assistant"},
		{"failed answers and their results left out",
			[]llm.Message{user, answer(llm.Aborted, "x1"), result("x1"), answer(llm.Error), user}, nil, nil,
			"user user"},
		{"stand-ins before the next turn and at the end",
			[]llm.Message{user, answer(llm.ToolUse, "a", "b"), result("a"), user, answer(llm.ToolUse, "c")}, nil, nil,
			"user assistant(a,b) result:a result:b! user assistant(c) result:c!"},
		{"result without its call left out",
			[]llm.Message{user, answer(llm.ToolUse, "a"), result("zzz"), result("a"), result("a")}, nil, nil,
			"user assistant(a) result:a"},
		{"a failed answer does not end the calls before it",
			[]llm.Message{answer(llm.ToolUse, "a"), answer(llm.Error, "b"), result("a"), result("b")}, nil, nil,
			"assistant(a) result:a"},
		{"results out of order", []llm.Message{answer(llm.ToolUse, "a", "b"), result("b"), result("a")}, nil, nil,
			"assistant(a,b) result:b result:a"},
		{"without keep every message is a turn", []llm.Message{answer(llm.ToolUse, "a"), empty, other, result("a")}, nil, nil,
			"assistant(a) result:a! user note"},
		{"messages keep refuses are no turn", []llm.Message{answer(llm.ToolUse, "a"), empty, other, result("a"), user}, nonBlank, nil,
			"assistant(a) result:a user"},
		{"ids matched as id maps them", []llm.Message{answer(llm.ToolUse, "call|1"), result("call_1")}, nil,
			func(s string) string { return strings.ReplaceAll(s, "|", "_") },
			"assistant(call|1) result:call_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]llm.Message(nil), tt.in...)
			got := Repair(tt.in, tt.keep, tt.id)
			if diff := cmp.Diff(tt.want, describe(got)); diff != "" {
				t.Errorf("Repair (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.in); diff != "" {
				t.Errorf("input changed (-before +after):\n%s", diff)
			}
			for _, m := range got {
				if m.Role == llm.ToolResult && strings.HasPrefix(m.TextOf(), "No result") &&
					(!m.IsError || m.ToolName != "bash" || m.TextOf() != NoResult) {
					t.Errorf("stand-in %+v", m)
				}
			}
		})
	}
}

func describe(ms []llm.Message) string {
	var out []string
	for _, m := range ms {
		s := string(m.Role)
		switch m.Role {
		case llm.ToolResult:
			s = "result:" + m.ToolCallID
			if m.TextOf() == NoResult {
				s += "!"
			}
		case llm.Assistant:
			var ids []string
			for _, c := range m.ToolCalls() {
				ids = append(ids, c.ID)
			}
			if len(ids) > 0 {
				s += "(" + strings.Join(ids, ",") + ")"
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}
