package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// conversation has every kind of message and block rally sends.
func conversation() []llm.Message {
	return []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("look"), {Type: llm.ImageType, Data: "iVBORw0KGgo=", MimeType: "image/png"}}},
		{Role: llm.Assistant, API: llm.APIAnthropicMessages, Provider: "anthropic", Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "hmm", ThinkingSignature: "sig1"},
			{Type: llm.ThinkingType, ThinkingSignature: "redacted-data"},
			{Type: llm.ThinkingType, Thinking: "unsigned, dropped"},
			llm.Text("Reading both."),
			{Type: llm.ToolCallType, ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
			{Type: llm.ToolCallType, ID: "call_2|fc_9", Name: "bash", Arguments: json.RawMessage(`not json`)},
		}},
		{Role: llm.ToolResult, ToolCallID: "toolu_1", ToolName: "read", Content: []llm.Content{llm.Text("contents")}},
		{Role: llm.ToolResult, ToolCallID: "call_2|fc_9", ToolName: "bash", IsError: true, Content: []llm.Content{llm.Text("exit 1")}},
		{Role: llm.Assistant, API: llm.APIOpenAIResponses, Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "other provider", ThinkingSignature: "rs_1"},
			llm.Text("Done."),
		}},
		{Role: llm.Assistant, Content: []llm.Content{llm.Text("  ")}}, // empty: dropped
		{Role: llm.User, Content: []llm.Content{llm.Text("thanks")}},
	}
}

func TestRequestBody(t *testing.T) {
	s := providertest.NewServer(t, api.Stream(textBody("ok")))
	req := &llm.Request{
		Model:    model(),
		System:   "You are terse.",
		Messages: conversation(),
		Tools: []llm.Tool{
			{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs", Description: "No arguments"},
		},
		MaxTokens: 1000,
	}
	if _, err, _ := providertest.Run(t, client(s), req); err != nil {
		t.Fatal(err)
	}
	want := `{
	"model": "claude-sonnet-4-5",
	"max_tokens": 1000,
	"stream": true,
	"system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
	"tools": [
		{"name": "read", "description": "Read a file", "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
		{"name": "noargs", "description": "No arguments", "input_schema": {"type":"object","properties":{}}}
	],
	"messages": [
		{"role": "user", "content": [
			{"type": "text", "text": "look"},
			{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
		]},
		{"role": "assistant", "content": [
			{"type": "thinking", "thinking": "hmm", "signature": "sig1"},
			{"type": "redacted_thinking", "data": "redacted-data"},
			{"type": "text", "text": "Reading both."},
			{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
			{"type": "tool_use", "id": "call_2_fc_9", "name": "bash", "input": {}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "contents"}]},
			{"type": "tool_result", "tool_use_id": "call_2_fc_9", "content": [{"type": "text", "text": "exit 1"}], "is_error": true}
		]},
		{"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
		{"role": "user", "content": [{"type": "text", "text": "thanks", "cache_control": {"type": "ephemeral"}}]}
	]
}`
	providertest.EqualJSON(t, want, s.Last().Body)
}

func TestMaxTokensAndThinking(t *testing.T) {
	reasoning := model() // MaxTokens 64000, reasoning
	plain := reasoning
	plain.Reasoning = false
	small := reasoning
	small.MaxTokens = 3000
	tests := []struct {
		name      string
		model     llm.Model
		max       int
		thinking  string
		wantMax   int
		wantBudge int // 0: no thinking block
	}{
		{"model max", reasoning, 0, "", 64000, 0},
		{"request max", reasoning, 500, "off", 500, 0},
		{"default max", llm.Model{ID: "claude-x"}, 0, "", DefaultMaxTokens, 0},
		{"thinking adds budget", reasoning, 4000, "medium", 4000 + 8192, 8192},
		{"thinking capped by model", reasoning, 60000, "high", 64000, 16384},
		{"budget cut to fit", small, 0, "high", 3000, 3000 - minOutput},
		{"no room to think", llm.Model{ID: "c", Reasoning: true, MaxTokens: 1500}, 0, "low", 1500, 0},
		{"not a reasoning model", plain, 1000, "high", 1000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newRequest(&llm.Request{Model: tt.model, MaxTokens: tt.max, Thinking: tt.thinking})
			if err != nil {
				t.Fatal(err)
			}
			budget := 0
			if r.Thinking != nil {
				budget = r.Thinking.BudgetTokens
				if r.Thinking.Type != "enabled" || budget >= r.MaxTokens {
					t.Errorf("thinking %+v with max_tokens %d", r.Thinking, r.MaxTokens)
				}
			}
			if r.MaxTokens != tt.wantMax || budget != tt.wantBudge {
				t.Errorf("max_tokens %d budget %d, want %d %d", r.MaxTokens, budget, tt.wantMax, tt.wantBudge)
			}
		})
	}
	if _, err := newRequest(&llm.Request{}); err == nil {
		t.Error("a request without a model was accepted")
	}
}

func TestToolID(t *testing.T) {
	for in, want := range map[string]string{
		"toolu_01A-b": "toolu_01A-b",
		"call_1|fc_2": "call_1_fc_2",
		"":            "toolu_none",
		"a.b/c d":     "a_b_c_d",
		string(make([]byte, 80)): string(func() []byte {
			b := make([]byte, 64)
			for i := range b {
				b[i] = '_'
			}
			return b
		}()),
	} {
		if got := toolID(in); got != want {
			t.Errorf("toolID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCallsAndResultsPairUp(t *testing.T) {
	conv := providertest.Unpaired()
	got := messages(conv)
	type short struct{ role, blocks string }
	var gotShort []short
	for _, m := range got {
		var bs []string
		for _, b := range m.Content {
			s := b.Type
			switch b.Type {
			case "tool_use":
				s += ":" + b.ID
			case "tool_result":
				s += ":" + b.ToolUseID
				if b.IsError {
					s += "!"
				}
			}
			bs = append(bs, s)
		}
		gotShort = append(gotShort, short{m.Role, strings.Join(bs, ",")})
	}
	want := []short{
		{"user", "text"},
		{"assistant", "tool_use:a,tool_use:b"},
		{"user", "tool_result:a,tool_result:b!"},
		{"user", "text"},
		{"assistant", "tool_use:c"},
		{"user", "tool_result:c!"},
	}
	if diff := cmp.Diff(want, gotShort, cmp.AllowUnexported(short{})); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got[2].Content[1].Content[0].Text != httpcall.NoResult {
		t.Errorf("made-up result %+v", got[2].Content[1])
	}
}

func TestThinkingOffForAnUnsignedToolLoop(t *testing.T) {
	call := llm.Content{Type: llm.ToolCallType, ID: "c1", Name: "bash", Arguments: json.RawMessage(`{}`)}
	result := llm.Message{Role: llm.ToolResult, ToolCallID: "c1", ToolName: "bash", Content: []llm.Content{llm.Text("ok")}}
	user := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("go")}}
	signed := llm.Message{Role: llm.Assistant, API: llm.APIAnthropicMessages, StopReason: llm.ToolUse,
		Content: []llm.Content{{Type: llm.ThinkingType, Thinking: "t", ThinkingSignature: "s"}, call}}
	foreign := llm.Message{Role: llm.Assistant, API: llm.APIOpenAIResponses, StopReason: llm.ToolUse,
		Content: []llm.Content{{Type: llm.ThinkingType, Thinking: "t", ThinkingSignature: "rs_1"}, call}}
	tests := []struct {
		name  string
		conv  []llm.Message
		think bool
	}{
		{"new prompt", []llm.Message{user}, true},
		{"signed loop", []llm.Message{user, signed, result}, true},
		{"foreign loop", []llm.Message{user, foreign, result}, false},
		{"foreign answer before the prompt", []llm.Message{user, foreign, result, {Role: llm.Assistant, Content: []llm.Content{llm.Text("done")}}, user}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newRequest(&llm.Request{Model: model(), Messages: tt.conv, Thinking: "low"})
			if err != nil {
				t.Fatal(err)
			}
			if (r.Thinking != nil) != tt.think {
				t.Errorf("thinking %+v, want on = %v", r.Thinking, tt.think)
			}
		})
	}
}
