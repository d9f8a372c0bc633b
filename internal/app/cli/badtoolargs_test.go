package cli

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// badArgs are a bash call's arguments cut short: only the closing brace
// is missing, so a parser that repaired or guessed would run the command.
const badArgs = `{"command": "touch ran.txt"`

// sseData is one server-sent event: an optional event name and v as JSON.
func sseData(event string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if event != "" {
		return "event: " + event + "\ndata: " + string(b) + "\n\n"
	}
	return "data: " + string(b) + "\n\n"
}

// badArgsStreams are, per API, a response that streams one bash call with
// badArgs and ends normally, the way each API sends tool calls.
var badArgsStreams = []struct {
	api, base string
	body      string
}{
	{"openai-completions", "/v1", sseData("", obj{"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": []obj{{"index": 0, "delta": obj{"role": "assistant",
		"tool_calls": []obj{{"index": 0, "id": "call_1", "type": "function", "function": obj{"name": "bash", "arguments": ""}}}}, "finish_reason": nil}}}) +
		sseData("", obj{"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": []obj{{"index": 0, "delta": obj{
			"tool_calls": []obj{{"index": 0, "function": obj{"arguments": badArgs}}}}, "finish_reason": nil}}}) +
		sseData("", obj{"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": []obj{{"index": 0, "delta": obj{}, "finish_reason": "tool_calls"}}}) +
		"data: [DONE]\n\n"},
	{"openai-responses", "/v1", sseData("response.created", obj{"type": "response.created", "response": obj{"id": "resp_1", "status": "in_progress", "output": []obj{}}}) +
		sseData("response.output_item.added", obj{"type": "response.output_item.added", "output_index": 0,
			"item": obj{"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "bash"}}) +
		sseData("response.function_call_arguments.delta", obj{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": badArgs}) +
		sseData("response.function_call_arguments.done", obj{"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": badArgs}) +
		sseData("response.output_item.done", obj{"type": "response.output_item.done", "output_index": 0,
			"item": obj{"id": "fc_1", "type": "function_call", "status": "completed", "arguments": badArgs, "call_id": "call_1", "name": "bash"}}) +
		sseData("response.completed", obj{"type": "response.completed", "response": obj{"id": "resp_1", "status": "completed",
			"usage": obj{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}})},
	{"anthropic-messages", "", sseData("message_start", obj{"type": "message_start", "message": obj{"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
		"content": []obj{}, "stop_reason": nil, "usage": obj{"input_tokens": 10, "output_tokens": 1}}}) +
		sseData("content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": obj{}}}) +
		sseData("content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "input_json_delta", "partial_json": badArgs}}) +
		sseData("content_block_stop", obj{"type": "content_block_stop", "index": 0}) +
		sseData("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": "tool_use"}, "usage": obj{"output_tokens": 5}}) +
		sseData("message_stop", obj{"type": "message_stop"})},
	// Gemini sends a call's arguments whole, inside valid JSON: what can
	// be wrong with them is that they are no object (here a string).
	{"google-generative-ai", "/v1beta", sseData("", obj{"candidates": []obj{{"content": obj{"role": "model", "parts": []obj{{"functionCall": obj{"name": "bash", "args": badArgs}}}},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": obj{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})},
}

// TestBadStreamedToolArguments: a tool call whose streamed arguments do not
// parse is not run, not even with {}: the model gets an error result that
// says its arguments were not valid JSON (or no object), the next request
// carries it, and the session file keeps the arguments as they came.
func TestBadStreamedToolArguments(t *testing.T) {
	for _, tc := range badArgsStreams {
		t.Run(tc.api, func(t *testing.T) {
			home := isolate(t)
			fake := newRecorded(t, llmtest.Step{Raw: []byte(tc.body)}, llmtest.Step{Text: "I will send it again."})
			out, errOut, code := run(t, "", "--api", tc.api, "--base-url", fake.url+tc.base, "--model", "m", "-p", "touch the file")
			if code != 0 || !strings.Contains(out, "I will send it again.") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
			}
			if _, err := os.Stat("ran.txt"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran (%v)", err)
			}
			reqs := fake.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			// The tool result the model reads next: the error, and that
			// nothing ran. Its text is JSON-escaped inside the request.
			if !strings.Contains(reqs[1], "bash: arguments ") || !strings.Contains(reqs[1], "the call was not run") {
				t.Errorf("the second request does not tell the model:\n%s", reqs[1])
			}

			files := sessionFiles(t, home)
			if len(files) != 1 {
				t.Fatalf("%d session files", len(files))
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var call *llm.Content
			var result *llm.Message
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var e struct {
					Type    string       `json:"type"`
					Message *llm.Message `json:"message"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("session line %q: %v", line, err)
				}
				if e.Type != "message" || e.Message == nil {
					continue
				}
				for _, c := range e.Message.ToolCalls() {
					call = &c
				}
				if e.Message.Role == llm.ToolResult {
					result = e.Message
				}
			}
			if call == nil || result == nil {
				t.Fatalf("the session file lacks the call or its result:\n%s", data)
			}
			if !strings.Contains(string(call.Arguments), `touch ran.txt`) {
				t.Errorf("the session file keeps arguments %s, want those sent", call.Arguments)
			}
			if !result.IsError || result.ToolCallID != call.ID || !strings.Contains(result.TextOf(), "the call was not run") {
				t.Errorf("tool result %+v, want an error for call %s saying it was not run", result, call.ID)
			}
		})
	}
}
