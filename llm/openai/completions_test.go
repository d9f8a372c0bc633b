package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

func TestCompletionsParse(t *testing.T) {
	role := `{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}`
	usageChunk := `{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"prompt_tokens_details":{"cached_tokens":40}}}`
	cachedUsage := &llm.Usage{Input: 60, Output: 10, CacheRead: 40, TotalTokens: 110}
	tool := func(index int, id, name, args string) string {
		c := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
		if id != "" {
			c["id"], c["type"] = id, "function"
			c["function"].(map[string]any)["name"] = name
		}
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{c}}}}})
		return string(b)
	}
	tests := []struct {
		name string
		body string
		want want
	}{
		{"text", chatStream(role, textChunk("Hel"), textChunk("lo"), finishChunk("stop"), usageChunk, "[DONE]"),
			want{text: "Hello", stop: llm.Stop, usage: cachedUsage}},
		{"parallel tool calls by index", chatStream(role,
			tool(0, "call_a", "read", ""), tool(1, "call_b", "bash", `{"cmd"`),
			tool(0, "", "", `{"path":`), tool(1, "", "", `:"ls"}`), tool(0, "", "", `"a.txt"}`),
			finishChunk("tool_calls"), "[DONE]"),
			want{calls: []wantCall{{"call_a", "read", `{"path":"a.txt"}`}, {"call_b", "bash", `{"cmd":"ls"}`}}, stop: llm.ToolUse}},
		{"two calls in one delta", chatStream(`{"choices":[{"index":0,"delta":{"tool_calls":[`+
			`{"index":0,"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1}"}},`+
			`{"index":1,"id":"c2","type":"function","function":{"name":"mul","arguments":"{\"a\":2}"}}]}}]}`,
			finishChunk("tool_calls"), "[DONE]"),
			want{calls: []wantCall{{"c1", "add", `{"a":1}`}, {"c2", "mul", `{"a":2}`}}, stop: llm.ToolUse}},
		{"every call at index 0", chatStream(tool(0, "c1", "add", `{}`), tool(0, "c2", "mul", `{}`), finishChunk("tool_calls"), "[DONE]"),
			want{calls: []wantCall{{"c1", "add", `{}`}, {"c2", "mul", `{}`}}, stop: llm.ToolUse}},
		{"call without id", chatStream(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"ls","arguments":"{}"}}]}}]}`,
			finishChunk("tool_calls"), "[DONE]"),
			want{calls: []wantCall{{"call_0", "ls", `{}`}}, stop: llm.ToolUse}},
		{"reasoning_content", chatStream(`{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"hard"}}]}`, textChunk("ok"), finishChunk("stop"), "[DONE]"),
			want{thinking: "think hard", text: "ok", stop: llm.Stop}},
		{"reasoning with details not doubled", chatStream(
			`{"choices":[{"index":0,"delta":{"content":"","reasoning":"plan","reasoning_details":[{"type":"reasoning.text","text":"plan"}]}}]}`,
			textChunk("done"), finishChunk("stop"), "[DONE]"),
			want{thinking: "plan", text: "done", stop: llm.Stop}},
		{"reasoning_details only", chatStream(
			`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.summary","summary":"sum"},{"type":"reasoning.encrypted","data":"x"}]}}]}`,
			finishChunk("stop"), "[DONE]"),
			want{thinking: "sum", stop: llm.Stop}},
		{"refusal is text", chatStream(`{"choices":[{"index":0,"delta":{"refusal":"I can't."}}]}`, finishChunk("stop"), "[DONE]"),
			want{text: "I can't.", stop: llm.Stop}},
		{"finish length", chatStream(textChunk("cut"), finishChunk("length"), "[DONE]"), want{text: "cut", stop: llm.Length}},
		{"finish tool_calls", chatStream(tool(0, "c", "f", "{}"), finishChunk("tool_calls"), "[DONE]"),
			want{calls: []wantCall{{"c", "f", "{}"}}, stop: llm.ToolUse}},
		{"finish function_call", chatStream(textChunk("x"), finishChunk("function_call"), "[DONE]"), want{text: "x", stop: llm.ToolUse}},
		{"finish unknown", chatStream(textChunk("x"), finishChunk("eos"), "[DONE]"), want{text: "x", stop: llm.Stop}},
		{"finish content_filter", chatStream(textChunk("x"), finishChunk("content_filter"), "[DONE]"),
			want{text: "x", stop: llm.Error, errSub: "content filter"}},
		{"finish error (OpenRouter)", chatStream(textChunk("x"), finishChunk("error")),
			want{text: "x", stop: llm.Error, errSub: "finish_reason: error"}},
		{"error chunk", chatStream(textChunk("x"), `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`),
			want{text: "x", stop: llm.Error, errSub: "server_error"}},
		{"OpenRouter error chunk", chatStream(textChunk("x"),
			`{"id":"gen-1","error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"X"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`),
			want{text: "x", stop: llm.Error, errSub: "Provider returned error"}},
		{"proxy error event", "event: error\ndata: {\"message\":\"upstream overloaded\"}\n\n",
			want{stop: llm.Error, errSub: "upstream overloaded"}},
		{"usage after finish, no [DONE]", chatStream(textChunk("x"), finishChunk("stop"), usageChunk),
			want{text: "x", stop: llm.Stop, usage: cachedUsage}},
		{"finish, no usage, no [DONE]", chatStream(textChunk("x"), finishChunk("stop")), want{text: "x", stop: llm.Stop}},
		{"[DONE] without finish", chatStream(textChunk("x"), "[DONE]"), want{text: "x", stop: llm.Stop}},
		{"no finish, no [DONE]", chatStream(textChunk("x")), want{text: "x", stop: llm.Error, errSub: "truncated"}},
		{"empty body", "", want{stop: llm.Error, errSub: "truncated"}},
		{"empty choices first", chatStream(`{"id":"","choices":[],"prompt_filter_results":[]}`, textChunk("x"), finishChunk("stop"), "[DONE]"),
			want{text: "x", stop: llm.Stop}},
		{"second choice ignored", chatStream(`{"choices":[{"index":1,"delta":{"content":"other"}}]}`, textChunk("x"), finishChunk("stop"), "[DONE]"),
			want{text: "x", stop: llm.Stop}},
		{"DeepSeek cache fields", chatStream(textChunk("x"), finishChunk("stop"),
			`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_cache_hit_tokens":6}}`, "[DONE]"),
			want{text: "x", stop: llm.Stop, usage: &llm.Usage{Input: 4, Output: 2, CacheRead: 6, TotalTokens: 12}}},
		{"undecodable chunk", chatStream(textChunk("x"), `{"choices":[{"index":0,"delta":{"content":`),
			want{text: "x", stop: llm.Error, errSub: "decode chunk"}},
		{"CRLF framing and comments", strings.ReplaceAll(": OPENROUTER PROCESSING\n\n"+chatStream(textChunk("x"), finishChunk("stop"), "[DONE]"), "\n", "\r\n"),
			want{text: "x", stop: llm.Stop}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveBytes(t, []byte(tt.body))
			msg, err := run(t, &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}}, request(testModel))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			check(t, msg, err, tt.want)
		})
	}
}

func TestCompletionsEvents(t *testing.T) {
	srv := serveBytes(t, []byte(chatStream(
		`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`,
		textChunk("Hi"),
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
		finishChunk("tool_calls"), "[DONE]")))
	got, msg := events(t, &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}})
	want := []llm.EventType{llm.EventStart, llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventToolCallStart, llm.EventToolCallDelta,
		llm.EventTextEnd, llm.EventToolCallEnd, llm.EventDone}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if msg.API != llm.APIOpenAICompletions || msg.Provider != "testprov" || msg.Model != "test-model" || msg.Role != llm.Assistant || msg.Timestamp == 0 {
		t.Errorf("message header: %+v", msg)
	}
}

func TestCompletionsCost(t *testing.T) {
	srv := serveBytes(t, []byte(chatStream(textChunk("x"), finishChunk("stop"),
		`{"choices":[],"usage":{"prompt_tokens":1000000,"completion_tokens":1000000,"total_tokens":2000000,"prompt_tokens_details":{"cached_tokens":500000}}}`, "[DONE]")))
	msg, err := run(t, &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}}, request(testModel))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Cost{Input: 0.5, Output: 2, CacheRead: 0.25, Total: 2.75}
	if msg.Usage.Cost != want {
		t.Errorf("cost %+v, want %+v", msg.Usage.Cost, want)
	}
}

// capture records the last request a test server got.
type capture struct {
	header http.Header
	path   string
	body   map[string]any
}

func captureServer(t *testing.T, reply string) (*httptest.Server, *capture) {
	t.Helper()
	c := &capture{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.header, c.path = r.Header.Clone(), r.URL.Path
		c.body = nil
		if err := json.Unmarshal(b, &c.body); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// conversation has every kind of message and block.
func conversation() []llm.Message {
	return []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("look"), {Type: llm.ImageType, Data: "QUJD", MimeType: "image/png"}}},
		{Role: llm.Assistant, API: llm.APIOpenAIResponses, Model: "test-model", StopReason: llm.ToolUse, Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "hmm", ThinkingSignature: `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"enc"}`},
			llm.Text("Reading."),
			{Type: llm.ToolCallType, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
		}},
		{Role: llm.ToolResult, ToolCallID: "call_1", ToolName: "read", Content: []llm.Content{llm.Text("file a"), {Type: llm.ImageType, Data: "REVG", MimeType: "image/jpeg"}}},
		{Role: llm.User, Content: []llm.Content{llm.Text("thanks")}},
	}
}

func TestCompletionsRequest(t *testing.T) {
	srv, got := captureServer(t, chatStream(finishChunk("stop"), "[DONE]"))
	m := testModel
	m.Reasoning = true
	req := &llm.Request{
		Model: m, System: "be brief", Messages: conversation(), Attempt: 3, Thinking: "high",
		Tools: []llm.Tool{{Name: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "now"}},
	}
	c := &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1/", APIKey: testKey, Header: http.Header{"X-Title": {"rally"}}}}
	if _, err := run(t, c, req); err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path %q", got.path)
	}
	for k, v := range map[string]string{"Authorization": "Bearer " + testKey, "X-Rally-Attempt": "3", "X-Title": "rally", "Content-Type": "application/json"} {
		if got.header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, got.header.Get(k), v)
		}
	}
	want := `{
		"model": "test-model", "stream": true, "stream_options": {"include_usage": true},
		"max_tokens": 1000, "reasoning_effort": "high",
		"messages": [
			{"role": "system", "content": "be brief"},
			{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]},
			{"role": "assistant", "content": "Reading.", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
			{"role": "tool", "tool_call_id": "call_1", "content": "file a"},
			{"role": "user", "content": [{"type": "text", "text": "Images from the tool results above:"}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,REVG"}}]},
			{"role": "user", "content": "thanks"}
		],
		"tools": [
			{"type": "function", "function": {"name": "read", "description": "read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
			{"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
		]
	}`
	providertest.EqualJSON(t, want, got.body)
}

func TestCompletionsRequestOptions(t *testing.T) {
	tests := []struct {
		name      string
		field     string
		reasoning bool
		thinking  string
		maxTokens int
		want      map[string]any // keys that must be present (nil value: absent)
	}{
		{"default field elsewhere", "", false, "high", 0, map[string]any{"max_tokens": 1000.0, "max_completion_tokens": nil, "reasoning_effort": nil}},
		{"forced completion field", "max_completion_tokens", true, "low", 50, map[string]any{"max_completion_tokens": 50.0, "max_tokens": nil, "reasoning_effort": "low"}},
		{"thinking off", "max_tokens", true, "off", 0, map[string]any{"max_tokens": 1000.0, "reasoning_effort": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := captureServer(t, chatStream(finishChunk("stop"), "[DONE]"))
			req := request(testModel)
			req.Model.Reasoning, req.Thinking, req.MaxTokens = tt.reasoning, tt.thinking, tt.maxTokens
			if _, err := run(t, &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}, MaxTokensField: tt.field}, req); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if gv, ok := got.body[k]; v == nil && ok || v != nil && gv != v {
					t.Errorf("%s = %v (present %v), want %v", k, gv, ok, v)
				}
			}
			if got.header.Get("Authorization") != "" {
				t.Errorf("Authorization sent without a key: %q", got.header.Get("Authorization"))
			}
		})
	}
}

func TestCompletionTokensHost(t *testing.T) {
	for url, want := range map[string]bool{
		"https://api.openai.com/v1/chat/completions":                        true,
		"https://my.openai.azure.com/openai/v1/chat/completions":            true,
		"https://openrouter.ai/api/v1/chat/completions":                     false,
		"http://localhost:11434/v1/chat/completions":                        false,
		"https://api.openai.com.evil.example/v1/chat/completions":           false,
		"https://generativelanguage.googleapis.com/v1beta/chat/completions": false,
	} {
		if got := (&Completions{}).completionTokens(url); got != want {
			t.Errorf("%s: %v, want %v", url, got, want)
		}
	}
}

// TestHistoryRepair checks that both APIs get the conversation as
// httpcall.Repair mends it (tested there in full): no trace of the aborted
// answer, and a stand-in for the call that got no result.
func TestHistoryRepair(t *testing.T) {
	call := func(id string) llm.Content {
		return llm.Content{Type: llm.ToolCallType, ID: id, Name: "f", Arguments: json.RawMessage(`{}`)}
	}
	req := request(testModel)
	req.Messages = []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text("go")}},
		{Role: llm.Assistant, StopReason: llm.Aborted, Content: []llm.Content{call("dead")}},
		{Role: llm.ToolResult, ToolCallID: "dead", Content: []llm.Content{llm.Text("x")}},
		{Role: llm.Assistant, StopReason: llm.ToolUse, Content: []llm.Content{call("a"), call("b")}},
		{Role: llm.ToolResult, ToolCallID: "a", Content: []llm.Content{llm.Text("ok")}},
		{Role: llm.User, Content: []llm.Content{llm.Text("next")}},
	}
	var chat []string
	for _, m := range (&Completions{}).request(req, "").Messages {
		chat = append(chat, m.Role+":"+m.ToolCallID)
		if m.ToolCallID == "b" && m.Content != httpcall.NoResult {
			t.Errorf("stand-in result %+v", m)
		}
	}
	if diff := cmp.Diff([]string{"user:", "assistant:", "tool:a", "tool:b", "user:"}, chat); diff != "" {
		t.Errorf("chat messages (-want +got):\n%s", diff)
	}
	var outputs []string
	for _, it := range respBody(req).Input {
		if o, ok := it.(respOutput); ok {
			outputs = append(outputs, o.CallID+":"+o.Output)
		}
	}
	if diff := cmp.Diff([]string{"a:ok", "b:" + httpcall.NoResult}, outputs); diff != "" {
		t.Errorf("function_call_output items (-want +got):\n%s", diff)
	}
}

func TestCompletionsAgainstProvider(t *testing.T) {
	// The model's base URL and provider are used when the client has none.
	srv := serveBytes(t, []byte(chatStream(textChunk("x"), finishChunk("stop"), "[DONE]")))
	m := testModel
	m.BaseURL = srv.URL
	msg, err := run(t, &Completions{}, request(m))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Provider != "testprov" {
		t.Errorf("provider %q", msg.Provider)
	}
	var c Completions
	if _, err := c.Stream(t.Context(), request(llm.Model{ID: "m", BaseURL: "http://127.0.0.1:1"})); err == nil || !strings.HasPrefix(err.Error(), "openai: send request: ") {
		t.Errorf("refused connection: %v", err)
	} else if errors.Is(err, io.EOF) {
		t.Errorf("unexpected EOF chain: %v", err)
	}
}
