package anthropic

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

func TestText(t *testing.T) {
	u := tested.Text(t).Usage
	if u.Input != 25 || u.Output != 15 || u.TotalTokens != 40 {
		t.Fatalf("usage %+v", u)
	}
	if want := (25*3.0 + 15*15.0) / 1e6; u.Cost.Total < want*0.999 || u.Cost.Total > want*1.001 {
		t.Errorf("cost %v, want %v", u.Cost.Total, want)
	}
}

func TestParallelToolCalls(t *testing.T) {
	body := msgStart(400, 0, 0, 1) +
		blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "Checking both.") + blockStop(0) +
		blockStart(1, `{"type":"tool_use","id":"toolu_A","name":"read","input":{}}`) +
		jsonDelta(1, "") + jsonDelta(1, `{"pa`) + jsonDelta(1, `th": "a.t`) + jsonDelta(1, `xt"}`) + blockStop(1) +
		blockStart(2, `{"type":"tool_use","id":"toolu_B","name":"bash","input":{}}`) +
		jsonDelta(2, `{"command":`) + jsonDelta(2, ` "ls -l \"x y\""}`) + blockStop(2) +
		msgDelta("tool_use", 80) + msgStop
	m, err, types := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != llm.ToolUse {
		t.Errorf("stop %q", m.StopReason)
	}
	calls := m.ToolCalls()
	want := []struct{ id, name, args string }{
		{"toolu_A", "read", `{"path":"a.txt"}`},
		{"toolu_B", "bash", `{"command":"ls -l \"x y\""}`},
	}
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	for i, w := range want {
		if calls[i].ID != w.id || calls[i].Name != w.name || !providertest.SameJSON(string(calls[i].Arguments), w.args) {
			t.Errorf("call %d = %s %s %s, want %+v", i, calls[i].ID, calls[i].Name, calls[i].Arguments, w)
		}
	}
	if n := providertest.Count(types, llm.EventToolCallDelta); n != 5 {
		t.Errorf("%d toolcall_delta events, want 5 (one per non-empty piece)", n)
	}
	if n := providertest.Count(types, llm.EventToolCallEnd); n != 2 {
		t.Errorf("%d toolcall_end events", n)
	}
}

func TestThinking(t *testing.T) {
	body := msgStart(40, 0, 0, 1) +
		blockStart(0, `{"type":"thinking","thinking":"","signature":""}`) + ping +
		thinkingDelta(0, "Let me think") + thinkingDelta(0, " hard.") + thinkingDelta(0, "") + signatureDelta(0, "EqQBsig==") + blockStop(0) +
		blockStart(1, `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}`) + blockStop(1) +
		blockStart(2, `{"type":"text","text":""}`) + textDelta(2, "42") + blockStop(2) +
		msgDelta("end_turn", 30) + msgStop
	m, err, types := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Content{
		{Type: llm.ThinkingType, Thinking: "Let me think hard.", ThinkingSignature: "EqQBsig=="},
		{Type: llm.ThinkingType, ThinkingSignature: "EmwKAhgBEgy3va3pzix"},
		{Type: llm.TextType, Text: "42"},
	}
	if diff := cmp.Diff(want, m.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if n := providertest.Count(types, llm.EventThinkingEnd); n != 2 {
		t.Errorf("%d thinking_end events", n)
	}
}

func TestUsageLastWins(t *testing.T) {
	tests := []struct {
		name  string
		delta string
		want  llm.Usage
	}{
		{"output only", msgDelta("end_turn", 99), llm.Usage{Input: 10, CacheRead: 2000, CacheWrite: 300, Output: 99, TotalTokens: 2409}},
		{"cumulative counts", ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"cache_read_input_tokens":2100,"cache_creation_input_tokens":0,"output_tokens":50}}`),
			llm.Usage{Input: 12, CacheRead: 2100, Output: 50, TotalTokens: 2162}},
		{"two deltas", msgDelta("", 5) + msgDelta("end_turn", 7), llm.Usage{Input: 10, CacheRead: 2000, CacheWrite: 300, Output: 7, TotalTokens: 2317}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := msgStart(10, 2000, 300, 1) + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "ok") + blockStop(0) + tt.delta + msgStop
			m, err, _ := tested.Reply(t, body)
			if err != nil {
				t.Fatal(err)
			}
			got := *m.Usage
			got.Cost = llm.Cost{}
			if got != tt.want {
				t.Errorf("usage %+v, want %+v", got, tt.want)
			}
			if m.Usage.Cost.CacheRead == 0 {
				t.Errorf("cache reads not priced: %+v", m.Usage.Cost)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		reason string
		want   llm.StopReason
	}{
		{"end_turn", llm.Stop},
		{"stop_sequence", llm.Stop},
		{"pause_turn", llm.Stop},
		{"max_tokens", llm.Length},
		{"model_context_window_exceeded", llm.Length},
		{"tool_use", llm.ToolUse},
		{"refusal", llm.Error},
		{"some_future_reason", llm.Stop},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			body := msgStart(5, 0, 0, 1) + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "x") + blockStop(0) + msgDelta(tt.reason, 3) + msgStop
			m, err, _ := tested.Reply(t, body)
			if m.StopReason != tt.want {
				t.Fatalf("stop %q, want %q (err %v)", m.StopReason, tt.want, err)
			}
			if tt.want != llm.Error {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "refused") || !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Errorf("refusal error %v", err)
			}
			if c := llm.Classify(err).Class; c != retry.Fatal {
				t.Errorf("refusal classified %v", c)
			}
			if m.TextOf() != "x" {
				t.Errorf("partial text lost: %q", m.TextOf())
			}
		})
	}
}

func TestErrorEvent(t *testing.T) {
	body := msgStart(18, 0, 0, 1) + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "Partial") + ping +
		ev("error", `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`)
	m, err, types := tested.Reply(t, body)
	if m.StopReason != llm.Error || types[len(types)-1] != llm.EventError {
		t.Fatalf("stop %q events %v", m.StopReason, types)
	}
	e, ok := llm.AsAPIError(err)
	if !ok || !e.MidStream || e.Type != "overloaded_error" || e.Message != "Overloaded" || e.StatusCode != 0 {
		t.Fatalf("error %#v", err)
	}
	if c := llm.Classify(err).Class; c != retry.Transient {
		t.Errorf("classified %v", c)
	}
	if m.TextOf() != "Partial" || !strings.Contains(m.ErrorMessage, "overloaded_error") {
		t.Errorf("text %q error message %q", m.TextOf(), m.ErrorMessage)
	}
}

func TestServerToolsAreNotToolCalls(t *testing.T) {
	body := msgStart(5, 0, 0, 1) +
		blockStart(0, `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}`) + jsonDelta(0, `{"query":"x"}`) + blockStop(0) +
		blockStart(1, `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://e.x"}]}`) + blockStop(1) +
		blockStart(2, `{"type":"text","text":""}`) + textDelta(2, "Found it.") +
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://e.x"}}}`) +
		blockStop(2) + msgDelta("end_turn", 9) + msgStop
	m, err, _ := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ToolCalls()) != 0 || m.StopReason != llm.Stop || m.TextOf() != "Found it." || len(m.Content) != 1 {
		t.Errorf("message %+v", m)
	}
}

func TestMalformed(t *testing.T) {
	start := msgStart(5, 0, 0, 1) + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "so far")
	tested.Malformed(t, "anthropic: ", []providertest.Malformed{
		{Name: "garbage mid-stream", Body: start + ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"`) + textDelta(0, "more") + msgStop},
		{Name: "wrong type", Body: start + ev("content_block_delta", `{"type":"content_block_delta","index":"zero"}`) + msgStop},
		{Name: "trailing data", Body: start + ev("content_block_delta", `{"type":"content_block_stop","index":0} {}`) + msgStop},
		{Name: "index out of range", Body: start + textDelta(1<<20, "x") + msgStop},
		{Name: "negative index", Body: start + blockStop(-1) + msgStop},
		{Name: "cut last event", Body: start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"ind", Truncated: true},
		{Name: "no message_stop", Body: start + blockStop(0) + msgDelta("end_turn", 2), Truncated: true},
		{Name: "empty body", Body: "", Truncated: true},
	})
}

func TestDeltaWithoutStart(t *testing.T) {
	body := msgStart(5, 0, 0, 1) + textDelta(0, "orphan") + jsonDelta(1, `{"a":1}`) + msgDelta("end_turn", 1) + msgStop
	m, err, _ := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if m.TextOf() != "orphan" || len(m.ToolCalls()) != 0 {
		t.Errorf("content %+v", m.Content)
	}
}

func TestEventsStreamAsTheyArrive(t *testing.T) {
	// The first delta must reach the caller while the server still holds
	// the rest of the answer back.
	release := make(chan struct{})
	s := providertest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		api.Stream(msgStart(5, 0, 0, 1)+blockStart(0, `{"type":"text","text":""}`)+textDelta(0, "first"))(w, r)
		<-release
		api.Send(w, textDelta(0, " second")+blockStop(0)+msgDelta("end_turn", 2)+msgStop)
	})
	defer close(release)
	st, err := client(s).Stream(t.Context(), ask("?"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var seen []llm.EventType
	for !slices.Contains(seen, llm.EventTextDelta) {
		e, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e.Type)
	}
	if st.Message().TextOf() != "first" {
		t.Errorf("text so far %q", st.Message().TextOf())
	}
}

func TestErrorEventShapes(t *testing.T) {
	start := msgStart(5, 0, 0, 1)
	tests := []struct{ name, body, has string }{
		{"no data", start + "event: error\n\n", "without details"},
		{"plain text", start + ev("error", "Internal Server Error"), "Internal Server Error"},
		{"unnamed", start + "data: " + `{"type":"error","error":{"type":"api_error","message":"boom"}}` + "\n\n", "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err, _ := tested.Reply(t, tt.body)
			e, ok := llm.AsAPIError(err)
			if !ok || !e.MidStream || m.StopReason != llm.Error || !strings.Contains(err.Error(), tt.has) {
				t.Errorf("stop %q err %#v", m.StopReason, err)
			}
		})
	}
}
