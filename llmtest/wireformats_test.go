package llmtest_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// format is what these tests know of one wire format: how a client asks
// for an answer, how it reads one, and what the provider's documentation
// says each case looks like. The decoders are the tests' own, written by
// hand from that documentation and independent both of rally's parsers and
// of the Server's writers, so that the Server is checked against the
// format rather than against itself. The tests loop over this table, so a
// new format the Server speaks is one entry in formats below, and
// TestEveryServedFormatIsKnown names the format until it has one.
type format struct {
	// path is a streaming request's path under the provider's usual
	// prefix, plainPath the one for a whole (not streamed) answer.
	path, plainPath string
	// body is a streaming request with two conversation entries; without
	// its "stream":true (and stream_options) it asks for a whole answer.
	body string
	// provider is the provider name retry.Classify takes.
	provider string

	// assemble reads a stream's events the way a client would.
	assemble func(t *testing.T, evs []event) result
	// readPlain reads a whole answer.
	readPlain func(v any) plainAnswer
	// errorShape tells whether an HTTP error body has the provider's shape.
	errorShape func(m map[string]any, status int) bool
	// framing checks the format's own framing habits on a whole stream.
	framing func(t *testing.T, s string)
	// errorEnd, when set, checks how a stream ends after an in-stream
	// error beyond what assemble reads.
	errorEnd func(t *testing.T, evs []event)

	// stop, toolStop and lengthStop are the stop reasons of an answer, of
	// one with tool calls, and of one cut at the token limit.
	stop, toolStop, lengthStop string
	// inputKey is the usage field with the prompt total and inputTotal its
	// value for 100 input tokens and 30 read from the cache: OpenAI and
	// Gemini count cached tokens inside it, Anthropic apart.
	inputKey, inputTotal string
	// noToolIDs: the format gives tool calls no id.
	noToolIDs bool
	// streamError is the error type an in-stream error event carries.
	streamError string
	// overloaded is the HTTP status of an overloaded provider.
	overloaded int
	// malformed is where a malformed request's error names its type, and
	// that type.
	malformed     []any
	malformedType string
}

var formats = map[llmtest.API]format{
	llmtest.OpenAICompletions: {
		path:     "/v1/chat/completions",
		body:     `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		provider: "openai", assemble: assembleChat, readPlain: plainChat, errorShape: openaiErrorShape, framing: chatFraming,
		stop: "stop", toolStop: "tool_calls", lengthStop: "length", inputKey: "prompt_tokens", inputTotal: "130",
		streamError: "server_error", overloaded: 503, malformed: []any{"error", "type"}, malformedType: "invalid_request_error",
	},
	llmtest.OpenAIResponses: {
		path:     "/v1/responses",
		body:     `{"model":"gpt-test","stream":true,"input":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}]}`,
		provider: "openai", assemble: assembleResponses, readPlain: plainResponses, errorShape: openaiErrorShape, framing: responsesFraming,
		errorEnd: func(t *testing.T, evs []event) {
			last := evs[len(evs)-1]
			if last.name != "response.failed" || evs[len(evs)-2].name != "error" || str(decode(t, last.data), "response", "status") != "failed" {
				t.Errorf("last events %v", evs[len(evs)-2:])
			}
		},
		stop: "completed", toolStop: "completed", lengthStop: "incomplete", inputKey: "input_tokens", inputTotal: "130",
		streamError: "server_error", overloaded: 503, malformed: []any{"error", "type"}, malformedType: "invalid_request_error",
	},
	llmtest.AnthropicMessages: {
		path:     "/v1/messages",
		body:     `{"model":"claude-test","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		provider: "anthropic", assemble: assembleAnthropic, readPlain: plainAnthropic, errorShape: anthropicErrorShape, framing: anthropicFraming,
		errorEnd: func(t *testing.T, evs []event) {
			if last := evs[len(evs)-1]; last.name != "error" {
				t.Errorf("last event %q", last.name)
			}
		},
		stop: "end_turn", toolStop: "tool_use", lengthStop: "max_tokens", inputKey: "input_tokens", inputTotal: "100",
		streamError: "overloaded_error", overloaded: 529, malformed: []any{"error", "type"}, malformedType: "invalid_request_error",
	},
	llmtest.GoogleGenerativeAI: {
		path:      "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
		plainPath: "/v1beta/models/gemini-test:generateContent",
		body:      `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}]}`,
		provider:  "gemini", assemble: assembleGemini, readPlain: plainGemini, errorShape: geminiErrorShape, framing: geminiFraming,
		stop: "STOP", toolStop: "STOP", lengthStop: "MAX_TOKENS", inputKey: "promptTokenCount", inputTotal: "130", noToolIDs: true,
		streamError: "UNAVAILABLE", overloaded: 503, malformed: []any{"error", "status"}, malformedType: "INVALID_ARGUMENT",
	},
}

// formatOf is api's entry, for a test that would otherwise call a missing
// decoder.
func formatOf(t *testing.T, api llmtest.API) format {
	t.Helper()
	f, ok := formats[api]
	if !ok {
		t.Fatalf("no entry for %s in formats (wireformats_test.go)", api)
	}
	return f
}

// TestEveryServedFormatIsKnown: every format the Server speaks has its
// entry here, complete, and the table names no format the Server lacks,
// so a new format fails here by name instead of deep inside another test.
func TestEveryServedFormatIsKnown(t *testing.T) {
	served := llmtest.APIs()
	for _, api := range served {
		t.Run(string(api), func(t *testing.T) {
			f, ok := formats[api]
			if !ok {
				t.Fatalf("llmtest serves %s but its tests know no client for it: add it to formats in wireformats_test.go", api)
			}
			if f.path == "" || f.body == "" || f.provider == "" || f.assemble == nil || f.readPlain == nil || f.errorShape == nil ||
				f.framing == nil || f.stop == "" || f.toolStop == "" || f.lengthStop == "" || f.inputKey == "" || f.inputTotal == "" ||
				f.streamError == "" || f.overloaded == 0 || len(f.malformed) == 0 || f.malformedType == "" {
				t.Errorf("the entry for %s is incomplete: %+v", api, f)
			}
		})
	}
	for api := range formats {
		if !slices.Contains(served, api) {
			t.Errorf("the tests know %s, which the Server does not speak", api)
		}
	}
}

func assembleChat(t *testing.T, evs []event) result {
	t.Helper()
	var r result
	byIndex := map[float64]int{}
	for _, ev := range evs {
		if ev.data == "[DONE]" {
			r.terminal = true
			continue
		}
		m := decode(t, ev.data)
		if e := get(m, "error"); e != nil {
			r.errType = str(e, "type")
			continue
		}
		if u, ok := get(m, "usage").(map[string]any); ok {
			r.usage = u
		}
		d := get(m, "choices", 0, "delta")
		if s := str(d, "content"); s != "" {
			r.text += s
			r.deltas++
		}
		if s := str(d, "reasoning_content"); s != "" {
			r.thinking += s
			r.deltas++
		}
		if tcs, ok := get(d, "tool_calls").([]any); ok {
			for _, tc := range tcs {
				idx := get(tc, "index").(float64)
				i, seen := byIndex[idx]
				if !seen {
					i = len(r.tools)
					byIndex[idx] = i
					r.tools = append(r.tools, toolOut{id: str(tc, "id"), name: str(tc, "function", "name")})
				}
				if a := str(tc, "function", "arguments"); a != "" {
					r.tools[i].args += a
					r.deltas++
				}
			}
		}
		if s := str(m, "choices", 0, "finish_reason"); s != "" {
			r.stop = s
		}
	}
	return r
}

// typed decodes a named event of a format whose data repeats the name as
// its "type", as Responses and Anthropic do.
func typed(t *testing.T, ev event) map[string]any {
	t.Helper()
	m := decode(t, ev.data)
	if str(m, "type") != ev.name {
		t.Errorf("event %q carries type %q", ev.name, str(m, "type"))
	}
	return m
}

func assembleResponses(t *testing.T, evs []event) result {
	t.Helper()
	var r result
	byItem := map[string]int{}
	for _, ev := range evs {
		m := typed(t, ev)
		switch ev.name {
		case "response.output_text.delta":
			r.text += str(m, "delta")
			r.deltas++
		case "response.reasoning_summary_text.delta":
			r.thinking += str(m, "delta")
			r.deltas++
		case "response.output_item.added":
			if str(m, "item", "type") == "function_call" {
				byItem[str(m, "item", "id")] = len(r.tools)
				r.tools = append(r.tools, toolOut{id: str(m, "item", "call_id"), name: str(m, "item", "name")})
			}
		case "response.function_call_arguments.delta":
			r.tools[byItem[str(m, "item_id")]].args += str(m, "delta")
			r.deltas++
		case "response.completed", "response.incomplete", "response.failed":
			r.terminal = ev.name != "response.failed"
			r.stop = str(m, "response", "status")
			r.usage, _ = get(m, "response", "usage").(map[string]any)
		case "error":
			r.errType = str(m, "error", "code")
		}
	}
	return r
}

func assembleAnthropic(t *testing.T, evs []event) result {
	t.Helper()
	var r result
	byIndex := map[float64]int{}
	for _, ev := range evs {
		m := typed(t, ev)
		switch ev.name {
		case "message_start":
			r.usage, _ = get(m, "message", "usage").(map[string]any)
		case "content_block_start":
			if str(m, "content_block", "type") == "tool_use" {
				byIndex[get(m, "index").(float64)] = len(r.tools)
				r.tools = append(r.tools, toolOut{id: str(m, "content_block", "id"), name: str(m, "content_block", "name")})
			}
		case "content_block_delta":
			switch d := get(m, "delta"); str(d, "type") {
			case "text_delta":
				r.text += str(d, "text")
				r.deltas++
			case "thinking_delta":
				r.thinking += str(d, "thinking")
				r.deltas++
			case "input_json_delta":
				if p := str(d, "partial_json"); p != "" {
					r.tools[byIndex[get(m, "index").(float64)]].args += p
					r.deltas++
				}
			}
		case "message_delta":
			r.stop = str(m, "delta", "stop_reason")
			r.usage, _ = get(m, "usage").(map[string]any)
		case "message_stop":
			r.terminal = true
		case "error":
			r.errType = str(m, "error", "type")
		}
	}
	return r
}

func assembleGemini(t *testing.T, evs []event) result {
	t.Helper()
	var r result
	for _, ev := range evs {
		m := decode(t, ev.data)
		if e := get(m, "error"); e != nil {
			r.errType = str(e, "status")
			continue
		}
		parts, _ := get(m, "candidates", 0, "content", "parts").([]any)
		for _, p := range parts {
			switch {
			case get(p, "functionCall") != nil:
				args, _ := json.Marshal(get(p, "functionCall", "args"))
				r.tools = append(r.tools, toolOut{id: str(p, "functionCall", "id"), name: str(p, "functionCall", "name"), args: string(args)})
				r.deltas++
			case get(p, "thought") == true:
				r.thinking += str(p, "text")
				r.deltas++
			default:
				r.text += str(p, "text")
				r.deltas++
			}
		}
		r.usage, _ = get(m, "usageMetadata").(map[string]any)
		if s := str(m, "candidates", 0, "finishReason"); s != "" {
			r.stop, r.terminal = s, true
		}
	}
	return r
}

func num(x any) float64 { f, _ := x.(float64); return f }

func plainChat(v any) (a plainAnswer) {
	msg := at(v, "choices", 0, "message")
	a.text = str(at(msg, "content"))
	a.tool, a.args = str(at(msg, "tool_calls", 0, "function", "name")), str(at(msg, "tool_calls", 0, "function", "arguments"))
	a.stop, a.output = str(at(v, "choices", 0, "finish_reason")), num(at(v, "usage", "completion_tokens"))
	return a
}

func plainResponses(v any) (a plainAnswer) {
	for _, it := range at(v, "output").([]any) {
		switch at(it, "type") {
		case "message":
			a.text = str(at(it, "content", 0, "text"))
		case "function_call":
			a.tool, a.args = str(at(it, "name")), str(at(it, "arguments"))
		}
	}
	a.stop, a.output = str(at(v, "status")), num(at(v, "usage", "output_tokens"))
	return a
}

func plainAnthropic(v any) (a plainAnswer) {
	for _, b := range at(v, "content").([]any) {
		switch at(b, "type") {
		case "text":
			a.text = str(at(b, "text"))
		case "tool_use":
			in, _ := json.Marshal(at(b, "input"))
			a.tool, a.args = str(at(b, "name")), string(in)
		}
	}
	a.stop, a.output = str(at(v, "stop_reason")), num(at(v, "usage", "output_tokens"))
	return a
}

func plainGemini(v any) (a plainAnswer) {
	for _, p := range at(v, "candidates", 0, "content", "parts").([]any) {
		if c := at(p, "functionCall"); c != nil {
			in, _ := json.Marshal(at(c, "args"))
			a.tool, a.args = str(at(c, "name")), string(in)
		} else {
			a.text += str(at(p, "text"))
		}
	}
	a.stop, a.output = str(at(v, "candidates", 0, "finishReason")), num(at(v, "usageMetadata", "candidatesTokenCount"))
	return a
}

func openaiErrorShape(m map[string]any, _ int) bool {
	return str(m, "error", "message") != "" && str(m, "error", "type") != ""
}

func anthropicErrorShape(m map[string]any, _ int) bool {
	return str(m, "type") == "error" && str(m, "error", "type") != "" && str(m, "error", "message") != "" && str(m, "request_id") != ""
}

func geminiErrorShape(m map[string]any, status int) bool {
	return get(m, "error", "code") == float64(status) && str(m, "error", "status") != "" && str(m, "error", "message") != ""
}

func chatFraming(t *testing.T, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "data: [DONE]\n\n") || strings.Contains(s, "event:") {
		t.Errorf("chat framing:\n%s", s)
	}
	if !strings.Contains(s, `"choices":[],"usage":{`) {
		t.Error("no usage chunk with empty choices despite include_usage")
	}
}

func responsesFraming(t *testing.T, s string) {
	t.Helper()
	evs, _ := readAll(strings.NewReader(s))
	for i, ev := range evs {
		if n := get(decode(t, ev.data), "sequence_number"); n != float64(i) {
			t.Fatalf("event %d (%s) has sequence_number %v", i, ev.name, n)
		}
	}
	if evs[0].name != "response.created" || strings.Contains(s, "[DONE]") {
		t.Errorf("responses framing:\n%s", s)
	}
	if !strings.Contains(s, `"call_id":"call_`) || !strings.Contains(s, `"id":"fc_`) {
		t.Error("function call item id and call_id should differ, as at OpenAI")
	}
}

func anthropicFraming(t *testing.T, s string) {
	t.Helper()
	evs, _ := readAll(strings.NewReader(s))
	names := []string{}
	for _, ev := range evs {
		names = append(names, ev.name)
	}
	j := strings.Join(names, ",")
	if !strings.HasPrefix(j, "message_start,content_block_start,ping,content_block_delta") || !strings.HasSuffix(j, "message_delta,message_stop") {
		t.Errorf("anthropic event order: %s", j)
	}
	for _, want := range []string{`"type":"signature_delta"`, `"partial_json":""`, `"type":"thinking_delta"`} {
		if !strings.Contains(s, want) {
			t.Errorf("no %s", want)
		}
	}
}

func geminiFraming(t *testing.T, s string) {
	t.Helper()
	if strings.Count(s, "\r\n\r\n") != strings.Count(s, "data: ") || strings.Contains(s, "event:") || strings.Contains(s, "[DONE]") {
		t.Errorf("gemini framing (CRLF, data only):\n%q", s)
	}
	if !strings.Contains(s, `"thought":true`) || !strings.Contains(s, `"args":{"path":"a.go","limit":10}`) {
		t.Errorf("gemini parts:\n%s", s)
	}
}
