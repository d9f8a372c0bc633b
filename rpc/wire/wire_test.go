package wire

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// reference is the straightforward map-based encoding the hand-written
// encoder must agree with (it was the implementation before).
func reference(e session.Event) ([]byte, error) {
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
	m := M{"type": string(e.Kind())}
	switch e := e.(type) {
	case session.MessageStartEvent:
		m["message"] = e.Message
	case session.MessageEndEvent:
		m["message"] = e.Message
	case session.MessageDiscardedEvent:
		m["message"] = e.Message
	case session.MessageUpdateEvent:
		m["message"], m["assistantMessageEvent"] = e.Message, e.Assistant
	case session.AgentEndEvent:
		m["messages"], m["willRetry"] = orEmpty(e.Messages), e.WillRetry
	case session.TurnEndEvent:
		m["message"], m["toolResults"] = e.Message, orEmpty(e.ToolResults)
	case session.ToolExecutionStartEvent:
		m["toolCallId"], m["toolName"], m["args"] = e.ToolCallID, e.ToolName, raw(e.Args)
	case session.ToolExecutionUpdateEvent:
		m["toolCallId"], m["toolName"], m["args"], m["partialResult"] = e.ToolCallID, e.ToolName, raw(e.Args), res(e.PartialResult)
	case session.ToolExecutionEndEvent:
		m["toolCallId"], m["toolName"], m["result"], m["isError"] = e.ToolCallID, e.ToolName, res(e.Result), e.IsError
	case session.AutoRetryStartEvent:
		m["attempt"], m["maxAttempts"], m["delayMs"] = e.Attempt, e.MaxAttempts, e.DelayMs
		m["errorMessage"], m["errorClass"] = e.ErrorMessage, e.ErrorClass.String()
		if e.SwitchedTo != "" {
			m["switchedTo"] = e.SwitchedTo
		}
	case session.AutoRetryEndEvent:
		m["success"], m["attempt"] = e.Success, e.Attempt
		if !e.Success {
			m["finalError"] = e.FinalError
		}
	case session.SessionErrorEvent:
		m["error"], m["op"] = e.ErrorMessage, e.Op
	case session.CompactionStartEvent:
		m["reason"] = string(e.Reason)
	case session.CompactionEndEvent:
		m["reason"], m["result"], m["aborted"], m["willRetry"] = string(e.Reason), e.Result, e.Aborted, e.WillRetry
	}
	return json.Marshal(m)
}

func sampleEvents() []session.Event {
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
	return []session.Event{
		session.AgentStartEvent{},
		session.TurnStartEvent{},
		session.AgentSettledEvent{},
		session.MessageStartEvent{Message: user},
		session.MessageEndEvent{Message: asst},
		session.MessageEndEvent{Message: &result},
		session.MessageDiscardedEvent{Message: failed},
		session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventTextDelta, ContentIndex: 1, Delta: "wö", Partial: asst}},
		session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventToolCallEnd, ContentIndex: 2, ToolCall: &asst.Content[2], Partial: asst}},
		session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventTextEnd, Content: "x", Partial: failed}},
		session.MessageUpdateEvent{Message: asst, Assistant: &llm.Event{Type: llm.EventDone, Reason: llm.Stop}},
		session.MessageUpdateEvent{},
		session.AgentEndEvent{Messages: []llm.Message{*user, *asst, result}, WillRetry: true},
		session.AgentEndEvent{},
		session.TurnEndEvent{Message: asst, ToolResults: []llm.Message{result}},
		session.TurnEndEvent{Message: failed},
		session.ToolExecutionStartEvent{ToolCallID: "c", ToolName: "bash", Args: json.RawMessage("{\n \"command\": \"ls\"\n}")},
		session.ToolExecutionStartEvent{ToolCallID: "c", ToolName: "bash"},
		session.ToolExecutionUpdateEvent{ToolCallID: "c", ToolName: "bash", Args: json.RawMessage(`{}`), PartialResult: &tool.Result{Content: []llm.Content{llm.Text("partial")}}},
		session.ToolExecutionEndEvent{ToolCallID: "c", ToolName: "bash", Result: &tool.Result{IsError: true}, IsError: true},
		session.ToolExecutionEndEvent{ToolCallID: "c", ToolName: "bash"},
		session.AutoRetryStartEvent{Attempt: 2, MaxAttempts: 3, DelayMs: 4000, ErrorMessage: "503", ErrorClass: retry.Transient, SwitchedTo: "openai/gpt-4.1"},
		session.AutoRetryEndEvent{Success: false, Attempt: 1, FinalError: "Retry cancelled"},
		session.CompactionStartEvent{Reason: "overflow"},
		session.CompactionEndEvent{Reason: "manual", Result: &session.CompactionResult{Summary: "s <b>&", FirstKeptEntryID: "a1b2c3d4", TokensBefore: 10}, WillRetry: true},
		session.CompactionEndEvent{Reason: "manual", Aborted: true},
		session.SessionErrorEvent{Op: session.OpSaveMessage, ErrorMessage: "journal: append to /s.jsonl: no space left on device"},
	}
}

// TestAppendJSONMatchesReference checks the hand-written encoder against
// encoding/json on every event type: the same value, and the same bytes
// wherever HTML escaping (which the reference does and the wire does not)
// plays no part.
func TestAppendJSONMatchesReference(t *testing.T) {
	for i, e := range sampleEvents() {
		t.Run(string(e.Kind()), func(t *testing.T) {
			got := AppendEvent(nil, e)
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
		t.Run(string(e.Kind()), func(t *testing.T) {
			line := AppendEvent(nil, e)
			back, err := DecodeEvent(line)
			if err != nil {
				t.Fatal(err)
			}
			if back.Kind() != e.Kind() {
				t.Fatalf("type %q", back.Kind())
			}
			// Encoding what was decoded gives the same line (the partial
			// of a message_update is its message on the wire).
			again := AppendEvent(nil, back)
			var a, b any
			json.Unmarshal(line, &a)
			json.Unmarshal(again, &b)
			if e.Kind() != session.MessageUpdate && !reflect.DeepEqual(a, b) {
				t.Errorf("round trip\nfirst  %s\nsecond %s", line, again)
			}
		})
	}
	decode := func(line string) session.Event {
		t.Helper()
		e, err := DecodeEvent([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	u := decode(`{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"hi","partial":{"role":"assistant","content":[],"timestamp":1}}}`)
	if e, _ := u.(session.MessageUpdateEvent); e.Assistant == nil || e.Assistant.Delta != "hi" || e.Assistant.Partial != e.Message {
		t.Errorf("message_update decoded as %+v", u)
	}
	c := decode(`{"type":"compaction_end","reason":"manual","result":{"summary":"s"},"aborted":false,"willRetry":false}`)
	if e, _ := c.(session.CompactionEndEvent); e.Result == nil || e.Result.Summary != "s" || e.Reason != session.ReasonManual {
		t.Errorf("compaction result %#v", c)
	}
	te := decode(`{"type":"tool_execution_end","toolCallId":"c","toolName":"bash","result":{"content":[{"type":"text","text":"x"}],"isError":true},"isError":true}`)
	if e, _ := te.(session.ToolExecutionEndEvent); e.Result == nil || !e.Result.IsError || e.Result.Content[0].Text != "x" {
		t.Errorf("tool result %+v", te)
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
		e := session.MessageUpdateEvent{Message: m, Assistant: &llm.Event{Type: llm.EventTextDelta, Delta: "word ", Partial: m}}
		b.Run("words="+strconv.Itoa(words), func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = AppendEvent(buf[:0], e)
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
			t.Errorf("llm.%s has JSON fields %q; rpc/wire/encode.go writes %q: update the encoder and this list", typ.Name(), got, known[typ.Name()])
		}
	}
	// The kinds written by hand: a field added to one must be added to
	// AppendEvent too (the other kinds are written through their tags).
	hand := map[string]string{
		"MessageStartEvent": "message", "MessageEndEvent": "message", "MessageDiscardedEvent": "message",
		"MessageUpdateEvent": "message assistantMessageEvent", "AgentEndEvent": "messages willRetry",
		"TurnEndEvent": "message toolResults", "ToolExecutionStartEvent": "args toolCallId toolName",
		"ToolExecutionUpdateEvent": "args partialResult toolCallId toolName",
		"ToolExecutionEndEvent":    "isError result toolCallId toolName",
	}
	for _, e := range sampleEvents() {
		typ := reflect.TypeOf(e)
		want, ok := hand[typ.Name()]
		if !ok {
			continue
		}
		var names []string
		for f := range typ.Fields() {
			names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("session.%s has JSON fields %q; AppendEvent writes %q: update it (encode.go) and this list", typ.Name(), got, want)
		}
	}
	if n := reflect.TypeOf(tool.Result{}).NumField(); n != 2 {
		t.Errorf("tool.Result has %d fields; rpc/wire/encode.go writes Content and IsError: update the encoder", n)
	}
}

func TestEventJSON(t *testing.T) {
	tests := []struct {
		e    session.Event
		want string
	}{
		{session.AutoRetryStartEvent{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded", ErrorClass: retry.Transient},
			`{"attempt":1,"delayMs":2000,"errorClass":"transient","errorMessage":"overloaded","maxAttempts":3,"type":"auto_retry_start"}`},
		{session.AutoRetryEndEvent{Success: true, Attempt: 2}, `{"attempt":2,"success":true,"type":"auto_retry_end"}`},
		{session.AutoRetryEndEvent{Attempt: 1, FinalError: "Retry cancelled"}, `{"attempt":1,"finalError":"Retry cancelled","success":false,"type":"auto_retry_end"}`},
		{session.AgentEndEvent{WillRetry: true}, `{"messages":[],"type":"agent_end","willRetry":true}`},
		{session.AgentSettledEvent{}, `{"type":"agent_settled"}`},
		{session.SessionErrorEvent{Op: "save message", ErrorMessage: "disk full"}, `{"error":"disk full","op":"save message","type":"session_error"}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.e.Kind()), func(t *testing.T) {
			if b := AppendEvent(nil, tt.e); string(b) != tt.want {
				t.Errorf("got %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestDecodeEventErrors(t *testing.T) {
	for name, line := range map[string]string{
		"not JSON":           `{"type":`,
		"unknown class":      `{"type":"auto_retry_start","attempt":1,"errorClass":"sometimes"}`,
		"bad tool result":    `{"type":"tool_execution_end","result":[1]}`,
		"bad compaction":     `{"type":"compaction_end","result":{"tokensBefore":"many"}}`,
		"a result of a kind": `{"type":"tool_execution_update","partialResult":"x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			if e, err := DecodeEvent([]byte(line)); err == nil || !strings.HasPrefix(err.Error(), "wire: decode") {
				t.Errorf("DecodeEvent(%s) = %+v, %v; want a wire: decode error", line, e, err)
			}
		})
	}
	e, err := DecodeEvent([]byte(`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":0,"errorClass":"usage_limit","errorMessage":"quota","switchedTo":"work"}`))
	if r, ok := e.(session.AutoRetryStartEvent); err != nil || !ok || r.ErrorClass != retry.UsageLimit || r.SwitchedTo != "work" {
		t.Errorf("auto_retry_start decoded as %+v, %v", e, err)
	}
}
