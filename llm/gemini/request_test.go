package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

func TestRequestBody(t *testing.T) {
	conv := []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("look"), {Type: llm.ImageType, Data: "iVBORw0KGgo=", MimeType: "image/png"}}},
		{Role: llm.Assistant, API: llm.APIGoogle, Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "plan", ThinkingSignature: "tsig"},
			{Type: llm.ThinkingType, Thinking: "unsigned: dropped"},
			llm.Text("Reading."),
			{Type: llm.ToolCallType, ID: "8hd01vsf", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`), ThoughtSignature: "csig"},
			{Type: llm.ToolCallType, ID: "call_x_1", Name: "bash", Arguments: json.RawMessage(`[1]`)},
		}},
		{Role: llm.ToolResult, ToolCallID: "8hd01vsf", ToolName: "read", Content: []llm.Content{llm.Text("contents"), {Type: llm.ImageType, Data: "R0lG", MimeType: "image/gif"}}},
		{Role: llm.ToolResult, ToolCallID: "call_x_1", ToolName: "bash", IsError: true, Content: []llm.Content{llm.Text("exit 1")}},
		{Role: llm.Assistant, API: llm.APIAnthropicMessages, Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "claude's", ThinkingSignature: "anthropic-sig"},
			{Type: llm.ToolCallType, ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)},
		}},
		{Role: llm.ToolResult, ToolCallID: "toolu_1", ToolName: "read", Content: []llm.Content{llm.Text("b!")}},
		{Role: llm.User, Content: []llm.Content{llm.Text("thanks")}},
	}
	s := providertest.NewServer(t, api.Stream(textBody("ok")))
	req := &llm.Request{
		Model:    model(),
		System:   "Be brief.",
		Messages: conv,
		Tools: []llm.Tool{
			{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "noargs", Description: "No arguments"},
		},
		MaxTokens: 2000,
		Thinking:  "low",
	}
	if _, err, _ := providertest.Run(t, client(s), req); err != nil {
		t.Fatal(err)
	}
	want := `{
	"systemInstruction": {"parts": [{"text": "Be brief."}]},
	"tools": [{"functionDeclarations": [
		{"name": "read", "description": "Read a file", "parametersJsonSchema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}},
		{"name": "noargs", "description": "No arguments"}
	]}],
	"generationConfig": {"maxOutputTokens": 2000, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 2048}},
	"contents": [
		{"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
		{"role": "model", "parts": [
			{"text": "plan", "thought": true, "thoughtSignature": "tsig"},
			{"text": "Reading."},
			{"functionCall": {"id": "8hd01vsf", "name": "read", "args": {"path": "a"}}, "thoughtSignature": "csig"},
			{"functionCall": {"name": "bash", "args": {}}}
		]},
		{"role": "user", "parts": [
			{"functionResponse": {"id": "8hd01vsf", "name": "read", "response": {"output": "contents"}}},
			{"inlineData": {"mimeType": "image/gif", "data": "R0lG"}},
			{"functionResponse": {"name": "bash", "response": {"error": "exit 1"}}}
		]},
		{"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": "b"}}}]},
		{"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "b!"}}}]},
		{"role": "user", "parts": [{"text": "thanks"}]}
	]
}`
	providertest.EqualJSON(t, want, s.Last().Body)
}

func TestGemini3SignatureStandIn(t *testing.T) {
	m := model()
	m.ID = "gemini-3-pro-preview"
	r, err := newRequest(&llm.Request{Model: m, Messages: []llm.Message{
		{Role: llm.Assistant, API: llm.APIOpenAICompletions, Content: []llm.Content{{Type: llm.ToolCallType, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{}`)}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Contents[0].Parts[0]; p.ThoughtSignature != skipSignature || p.FunctionCall.ID != "" {
		t.Errorf("part %+v", p)
	}
}

func TestGenerationConfig(t *testing.T) {
	plain := model()
	plain.Reasoning = false
	tests := []struct {
		name     string
		model    llm.Model
		max      int
		thinking string
		want     *generation
	}{
		{"model max", model(), 0, "", &generation{MaxOutputTokens: 65536}},
		{"off sends no thinking config", model(), 100, "off", &generation{MaxOutputTokens: 100}},
		{"high", model(), 0, "high", &generation{MaxOutputTokens: 65536, ThinkingConfig: &thinkingConfig{IncludeThoughts: true, ThinkingBudget: 16384}}},
		{"not a reasoning model", plain, 0, "high", &generation{MaxOutputTokens: 65536}},
		{"nothing to say", llm.Model{ID: "gemini-x"}, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newRequest(&llm.Request{Model: tt.model, MaxTokens: tt.max, Thinking: tt.thinking})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.GenerationConfig); diff != "" {
				t.Errorf("generationConfig (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := newRequest(&llm.Request{}); err == nil {
		t.Error("a request without a model was accepted")
	}
}

func TestCallsAndResultsPairUp(t *testing.T) {
	conv := providertest.Unpaired()
	var got []string
	for _, c := range contents(conv, false) {
		var ps []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				ps = append(ps, "call")
			case p.FunctionResponse != nil:
				ps = append(ps, fmt.Sprint(p.FunctionResponse.Response))
			default:
				ps = append(ps, "text")
			}
		}
		got = append(got, c.Role+": "+strings.Join(ps, ", "))
	}
	want := []string{
		"user: text",
		"model: call, call",
		"user: map[output:ok a], map[error:" + httpcall.NoResult + "]",
		"user: text",
		"model: call",
		"user: map[error:" + httpcall.NoResult + "]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}
