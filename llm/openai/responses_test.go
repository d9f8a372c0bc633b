package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

func TestResponsesParse(t *testing.T) {
	added := func(id, callID, name string) string {
		return `{"type":"response.output_item.added","output_index":0,"item":{"id":"` + id + `","type":"function_call","status":"in_progress","arguments":"","call_id":"` + callID + `","name":"` + name + `"}}`
	}
	args := func(id, d string) string {
		q, _ := json.Marshal(d)
		return `{"type":"response.function_call_arguments.delta","item_id":"` + id + `","output_index":0,"delta":` + string(q) + `}`
	}
	itemDone := func(id, callID, name, a string) string {
		q, _ := json.Marshal(a)
		return `{"type":"response.output_item.done","output_index":0,"item":{"id":"` + id + `","type":"function_call","status":"completed","arguments":` + string(q) + `,"call_id":"` + callID + `","name":"` + name + `"}}`
	}
	summary := func(s string) string {
		q, _ := json.Marshal(s)
		return `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":` + string(q) + `}`
	}
	cachedUsage := &llm.Usage{Input: 6, Output: 5, CacheRead: 4, TotalTokens: 15}
	tests := []struct {
		name string
		body string
		want want
	}{
		{"text", respStream(`{"type":"response.created","response":{"id":"r","status":"in_progress"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[],"role":"assistant"}}`,
			respText("Hel"), respText("lo"),
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message"}}`, respCompleted),
			want{text: "Hello", stop: llm.Stop, usage: cachedUsage}},
		{"parallel calls, arguments in pieces", respStream(
			added("fc_1", "call_a", "read"), added("fc_2", "call_b", "bash"),
			args("fc_1", `{"path":`), args("fc_2", `{"cmd":"ls"}`), args("fc_1", `"a"}`),
			itemDone("fc_1", "call_a", "read", `{"path":"a"}`), itemDone("fc_2", "call_b", "bash", `{"cmd":"ls"}`), respCompleted),
			want{calls: []wantCall{{"call_a", "read", `{"path":"a"}`}, {"call_b", "bash", `{"cmd":"ls"}`}}, stop: llm.ToolUse, usage: cachedUsage}},
		{"call sent whole", respStream(itemDone("fc_1", "call_a", "read", `{"path":"b"}`), respCompleted),
			want{calls: []wantCall{{"call_a", "read", `{"path":"b"}`}}, stop: llm.ToolUse, usage: cachedUsage}},
		{"reasoning summary", respStream(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
			summary("first"),
			`{"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`,
			summary("second"),
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			respText("answer"), respCompleted),
			want{thinking: "first\n\nsecond", text: "answer", stop: llm.Stop, usage: cachedUsage}},
		{"raw reasoning text", respStream(`{"type":"response.reasoning_text.delta","item_id":"rs_1","delta":"raw"}`, respCompleted),
			want{thinking: "raw", stop: llm.Stop, usage: cachedUsage}},
		{"incomplete max_output_tokens", respStream(respText("cut"),
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":9,"total_tokens":12}}}`),
			want{text: "cut", stop: llm.Length, usage: &llm.Usage{Input: 3, Output: 9, TotalTokens: 12}}},
		{"incomplete content_filter", respStream(respText("x"),
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`),
			want{text: "x", stop: llm.Error, errSub: "content filter"}},
		{"failed", respStream(respText("Hello"),
			`{"type":"response.failed","response":{"id":"resp_123","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"output":[]}}`),
			want{text: "Hello", stop: llm.Error, errSub: "server_error"}},
		{"failed without error object", respStream(`{"type":"response.failed","response":{"status":"failed","error":null}}`),
			want{stop: llm.Error, errSub: "stream error"}},
		{"error event, flat", respStream(respText("Hello"), `{"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null}`),
			want{text: "Hello", stop: llm.Error, errSub: "ERR_SOMETHING"}},
		{"error event, nested", respStream(`{"type":"error","error":{"type":"tokens","code":"rate_limit_exceeded","message":"Rate limit reached","param":null}}`),
			want{stop: llm.Error, errSub: "rate_limit_exceeded"}},
		{"no terminal event", respStream(respText("x")), want{text: "x", stop: llm.Error, errSub: "truncated"}},
		{"without event names", strings.ReplaceAll(respStream(respText("x"), respCompleted), "event: ", ": "),
			want{text: "x", stop: llm.Stop, usage: cachedUsage}},
		{"undecodable event", "event: response.output_text.delta\ndata: {\"delta\":\n\n",
			want{stop: llm.Error, errSub: "decode chunk"}},
		{"unknown events ignored", respStream(`{"type":"response.web_search_call.searching","item_id":"ws"}`, respText("x"), respCompleted),
			want{text: "x", stop: llm.Stop, usage: cachedUsage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveBytes(t, []byte(tt.body))
			msg, err := run(t, &Responses{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}}, request(testModel))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			check(t, msg, err, tt.want)
		})
	}
}

func TestResponsesReasoningSignature(t *testing.T) {
	item := `{"id":"rs_9","type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"gAAA"}`
	srv := serveBytes(t, []byte(respStream(
		`{"type":"response.reasoning_summary_text.delta","item_id":"rs_9","delta":"s"}`,
		`{"type":"response.output_item.done","output_index":0,"item":`+item+`}`,
		respText("ok"), respCompleted)))
	msg, err := run(t, &Responses{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}}, request(testModel))
	if err != nil {
		t.Fatal(err)
	}
	if c := msg.Content[0]; c.Type != llm.ThinkingType || c.ThinkingSignature != item {
		t.Errorf("thinking block %+v, want signature %s", c, item)
	}
}

func TestResponsesRequest(t *testing.T) {
	srv, got := captureServer(t, respStream(respCompleted))
	m := testModel
	m.Reasoning = true
	req := &llm.Request{
		Model: m, System: "be brief", Messages: conversation(), Attempt: 2, Thinking: "medium", MaxTokens: 77,
		Tools: []llm.Tool{{Name: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	if _, err := run(t, &Responses{ClientOptions: llm.ClientOptions{BaseURL: srv.URL, APIKey: testKey}}, req); err != nil {
		t.Fatal(err)
	}
	if got.path != "/responses" || got.header.Get("X-Rally-Attempt") != "2" || got.header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("path %q headers %v", got.path, got.header)
	}
	want := `{
		"model": "test-model", "instructions": "be brief", "stream": true, "store": false, "max_output_tokens": 77,
		"reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"],
		"input": [
			{"role": "user", "content": [{"type": "input_text", "text": "look"}, {"type": "input_image", "image_url": "data:image/png;base64,QUJD"}]},
			{"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "enc"},
			{"role": "assistant", "content": "Reading."},
			{"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"},
			{"type": "function_call_output", "call_id": "call_1", "output": "file a"},
			{"role": "user", "content": [{"type": "input_text", "text": "Images from the tool results above:"}, {"type": "input_image", "image_url": "data:image/jpeg;base64,REVG"}]},
			{"role": "user", "content": [{"type": "input_text", "text": "thanks"}]}
		],
		"tools": [{"type": "function", "name": "read", "description": "read a file", "parameters": {"type": "object"}, "strict": false}]
	}`
	providertest.EqualJSON(t, want, got.body)
}

func TestResponsesReasoningNotReplayedToOtherModel(t *testing.T) {
	srv, got := captureServer(t, respStream(respCompleted))
	req := request(testModel)
	req.Model.ID = "other-model"
	req.Messages = conversation()
	if _, err := run(t, &Responses{ClientOptions: llm.ClientOptions{BaseURL: srv.URL}}, req); err != nil {
		t.Fatal(err)
	}
	for _, it := range got.body["input"].([]any) {
		if m, ok := it.(map[string]any); ok && m["type"] == "reasoning" {
			t.Errorf("reasoning item sent to another model: %v", m)
		}
	}
	if _, ok := got.body["reasoning"]; ok {
		t.Error("reasoning sent for a non-reasoning model")
	}
}
