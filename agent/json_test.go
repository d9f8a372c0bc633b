package agent

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// reference is the straightforward map-based encoding the hand-written
// encoder must agree with (it was the implementation before).
func reference(e Event) ([]byte, error) {
	type M = map[string]any
	res := func(r *tool.Result) any {
		if r == nil {
			return nil
		}
		c := r.Content
		if c == nil {
			c = []llm.Content{}
		}
		return M{"content": c, "isError": r.IsError}
	}
	raw := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return json.RawMessage("{}")
		}
		return r
	}
	orEmpty := func(ms []llm.Message) []llm.Message {
		if ms == nil {
			return []llm.Message{}
		}
		return ms
	}
	m := M{"type": e.Type}
	switch e.Type {
	case MessageStart, MessageEnd, MessageDiscarded:
		m["message"] = e.Message
	case MessageUpdate:
		m["message"], m["assistantMessageEvent"] = e.Message, e.Assistant
	case AgentEnd:
		m["messages"], m["willRetry"] = orEmpty(e.Messages), e.WillRetry
	case TurnEnd:
		m["message"], m["toolResults"] = e.Message, orEmpty(e.ToolResults)
	case ToolExecutionStart:
		m["toolCallId"], m["toolName"], m["args"] = e.ToolCallID, e.ToolName, raw(e.Args)
	case ToolExecutionUpdate:
		m["toolCallId"], m["toolName"], m["args"], m["partialResult"] = e.ToolCallID, e.ToolName, raw(e.Args), res(e.Result)
	case ToolExecutionEnd:
		m["toolCallId"], m["toolName"], m["result"], m["isError"] = e.ToolCallID, e.ToolName, res(e.Result), e.IsError
	case AutoRetryStart:
		m["attempt"], m["maxAttempts"], m["delayMs"] = e.Attempt, e.MaxAttempts, e.DelayMs
		m["errorMessage"], m["errorClass"] = e.ErrorMessage, e.ErrorClass
		if e.SwitchedTo != "" {
			m["switchedTo"] = e.SwitchedTo
		}
	case AutoRetryEnd:
		m["success"], m["attempt"] = e.Success, e.Attempt
		if !e.Success {
			m["finalError"] = e.FinalError
		}
	case CompactionStart:
		m["reason"] = e.Reason
	case CompactionEnd:
		m["reason"], m["result"], m["aborted"], m["willRetry"] = e.Reason, e.Compaction, e.Aborted, e.WillRetry
	}
	return json.Marshal(m)
}

func sampleEvents() []Event {
	usage := &llm.Usage{Input: 12, Output: 3, CacheRead: 1, TotalTokens: 16, Cost: llm.Cost{Input: 0.000036, Output: 1e-7, Total: 3.61e-05}}
	asst := &llm.Message{Role: llm.Assistant, API: "openai-completions", Provider: "p", Model: "m",
		Content: []llm.Content{
			{Type: llm.ThinkingType, Thinking: "hmm \"quoted\"\n", ThinkingSignature: "sig"},
			llm.Text("Hello <b>&</b> wörld \u2028 tab\t ctl\x01 bad\xff end"),
			{Type: llm.ToolCallType, ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)},
		},
		Usage: usage, StopReason: llm.ToolUse, Timestamp: 1733234567890}
	result := llm.Message{Role: llm.ToolResult, ToolCallID: "call_1", ToolName: "bash", Content: []llm.Content{llm.Text("ok")}, Timestamp: 5}
	failed := &llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: "529 overloaded", Timestamp: 7}
	user := &llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("hi"), {Type: llm.ImageType, Data: "aGk=", MimeType: "image/png"}}, Timestamp: 1}
	return []Event{
		{Type: AgentStart},
		{Type: TurnStart},
		{Type: AgentSettled},
		{Type: MessageStart, Message: user},
		{Type: MessageEnd, Message: asst},
		{Type: MessageEnd, Message: &result},
		{Type: MessageDiscarded, Message: failed},
		{Type: MessageUpdate, Message: asst, Assistant: &llm.Event{Type: llm.EventTextDelta, ContentIndex: 1, Delta: "wö", Partial: asst}},
		{Type: MessageUpdate, Message: asst, Assistant: &llm.Event{Type: llm.EventToolCallEnd, ContentIndex: 2, ToolCall: &asst.Content[2], Partial: asst}},
		{Type: MessageUpdate, Message: asst, Assistant: &llm.Event{Type: llm.EventTextEnd, Content: "x", Partial: failed}},
		{Type: MessageUpdate, Message: asst, Assistant: &llm.Event{Type: llm.EventDone, Reason: llm.Stop}},
		{Type: MessageUpdate},
		{Type: AgentEnd, Messages: []llm.Message{*user, *asst, result}, WillRetry: true},
		{Type: AgentEnd},
		{Type: TurnEnd, Message: asst, ToolResults: []llm.Message{result}},
		{Type: TurnEnd, Message: failed},
		{Type: ToolExecutionStart, ToolCallID: "c", ToolName: "bash", Args: json.RawMessage("{\n \"command\": \"ls\"\n}")},
		{Type: ToolExecutionStart, ToolCallID: "c", ToolName: "bash"},
		{Type: ToolExecutionUpdate, ToolCallID: "c", ToolName: "bash", Args: json.RawMessage(`{}`), Result: &tool.Result{Content: []llm.Content{llm.Text("partial")}}},
		{Type: ToolExecutionEnd, ToolCallID: "c", ToolName: "bash", Result: &tool.Result{IsError: true}, IsError: true},
		{Type: ToolExecutionEnd, ToolCallID: "c", ToolName: "bash"},
		{Type: AutoRetryStart, Attempt: 2, MaxAttempts: 3, DelayMs: 4000, ErrorMessage: "503", ErrorClass: "transient", SwitchedTo: "openai/gpt-4.1"},
		{Type: AutoRetryEnd, Success: false, Attempt: 1, FinalError: "Retry cancelled"},
		{Type: CompactionStart, Reason: "overflow"},
		{Type: CompactionEnd, Reason: "manual", Compaction: map[string]any{"summary": "s", "tokensBefore": 10}, WillRetry: true},
		{Type: CompactionEnd, Reason: "manual", Aborted: true},
	}
}

// TestAppendJSONMatchesReference checks the hand-written encoder against
// encoding/json on every event type: the same value, and the same bytes
// wherever HTML escaping (which the reference does and the wire does not)
// plays no part.
func TestAppendJSONMatchesReference(t *testing.T) {
	for i, e := range sampleEvents() {
		t.Run(e.Type, func(t *testing.T) {
			got := e.AppendJSON(nil)
			want, err := reference(e)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("event %d: invalid JSON %s: %v", i, got, err)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("event %d\ngot  %s\nwant %s", i, got, want)
			}
			if !strings.ContainsAny(string(want), `\`) && string(got) != string(want) {
				t.Errorf("event %d bytes differ\ngot  %s\nwant %s", i, got, want)
			}
			if strings.ContainsRune(string(got), '\n') || strings.ContainsRune(string(got), '\u2028') {
				t.Errorf("event %d: a line break inside the line: %q", i, got)
			}
		})
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	for _, e := range sampleEvents() {
		t.Run(e.Type, func(t *testing.T) {
			line := e.AppendJSON(nil)
			var back Event
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatal(err)
			}
			if back.Type != e.Type {
				t.Fatalf("type %q", back.Type)
			}
			// Encoding what was decoded gives the same line (the partial
			// of a message_update is its message on the wire).
			again := back.AppendJSON(nil)
			var a, b any
			json.Unmarshal(line, &a)
			json.Unmarshal(again, &b)
			if e.Type != MessageUpdate && !reflect.DeepEqual(a, b) {
				t.Errorf("round trip\nfirst  %s\nsecond %s", line, again)
			}
		})
	}
	var e Event
	json.Unmarshal([]byte(`{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"hi","partial":{"role":"assistant","content":[],"timestamp":1}}}`), &e)
	if e.Assistant == nil || e.Assistant.Delta != "hi" || e.Assistant.Partial != e.Message {
		t.Errorf("message_update decoded as %+v", e.Assistant)
	}
	json.Unmarshal([]byte(`{"type":"compaction_end","reason":"manual","result":{"summary":"s"},"aborted":false,"willRetry":false}`), &e)
	if raw, ok := e.Compaction.(json.RawMessage); !ok || string(raw) != `{"summary":"s"}` {
		t.Errorf("compaction result %#v", e.Compaction)
	}
	json.Unmarshal([]byte(`{"type":"tool_execution_end","toolCallId":"c","toolName":"bash","result":{"content":[{"type":"text","text":"x"}],"isError":true},"isError":true}`), &e)
	if e.Result == nil || !e.Result.IsError || e.Result.Content[0].Text != "x" {
		t.Errorf("tool result %+v", e.Result)
	}
}

// FuzzAppendString checks the string escaper against encoding/json: any
// input, valid UTF-8 or not, decodes to what encoding/json's encoding
// decodes to.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text", "quote\" back\\slash", "\x00\x1f\x7f", "wörld\u2028\u2029", "bad\xff\xfe", "12345678\n12345678\"", strings.Repeat("a", 17) + "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		want, _ := json.Marshal(s)
		var g, w string
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s", s, got)
		}
		json.Unmarshal(want, &w)
		if g != w {
			t.Fatalf("%q: got %q want %q", s, g, w)
		}
		if strings.ContainsAny(string(got), "\n\r\u2028\u2029") {
			t.Fatalf("%q: line break in %q", s, got)
		}
	})
}

func BenchmarkMessageUpdateJSON(b *testing.B) {
	for _, words := range []int{10, 100, 1000} {
		m := &llm.Message{Role: llm.Assistant, API: "openai-completions", Provider: "p", Model: "m",
			Content: []llm.Content{llm.Text(strings.Repeat("word ", words))}, Timestamp: 1}
		e := Event{Type: MessageUpdate, Message: m, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "word ", Partial: m}}
		b.Run("words="+strconv.Itoa(words), func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = e.AppendJSON(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// TestEncoderKnowsEveryField fails when a JSON field is added to a type the
// hand-written encoder writes, so that the encoder is updated with it
// (json.go) instead of silently dropping the field from every event.
func TestEncoderKnowsEveryField(t *testing.T) {
	known := map[string]string{
		"Message": "role content api provider model usage stopReason errorMessage toolCallId toolName isError timestamp",
		"Content": "type text thinking thinkingSignature data mimeType id name arguments thoughtSignature",
		"Usage":   "input output cacheRead cacheWrite totalTokens cost",
		"Cost":    "input output cacheRead cacheWrite total",
		"Event":   "type contentIndex delta content toolCall reason partial",
	}
	for _, v := range []any{llm.Message{}, llm.Content{}, llm.Usage{}, llm.Cost{}, llm.Event{}} {
		typ := reflect.TypeOf(v)
		var names []string
		for i := range typ.NumField() {
			tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			if tag != "-" && tag != "" {
				names = append(names, tag)
			}
		}
		if got := strings.Join(names, " "); got != known[typ.Name()] {
			t.Errorf("llm.%s has JSON fields %q; agent/json.go writes %q: update the encoder and this list", typ.Name(), got, known[typ.Name()])
		}
	}
	var fields []string
	for f := range reflect.TypeOf(Event{}).Fields() {
		fields = append(fields, f.Name)
	}
	const eventFields = "Type Message Assistant Messages ToolResults ToolCallID ToolName Args Result IsError WillRetry " +
		"Attempt MaxAttempts DelayMs ErrorMessage ErrorClass SwitchedTo Success FinalError Reason Compaction Aborted"
	if got := strings.Join(fields, " "); got != eventFields {
		t.Errorf("agent.Event has fields %q; AppendJSON and UnmarshalJSON know %q: update them (json.go, jsondecode.go) and this list", got, eventFields)
	}
	if n := reflect.TypeOf(tool.Result{}).NumField(); n != 2 {
		t.Errorf("tool.Result has %d fields; agent/json.go writes Content and IsError: update the encoder", n)
	}
}
