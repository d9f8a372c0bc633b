package gemini

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

func TestText(t *testing.T) {
	if u := tested.Text(t).Usage; u.Input != 12 || u.Output != 3 || u.TotalTokens != 15 || u.Cost.Total == 0 {
		t.Errorf("usage %+v", u)
	}
}

func TestToolCalls(t *testing.T) {
	body := chunkOf(text("Checking."), "", []int{50, 2, 0, 0}) +
		chunkOf(call("read", `{"path":"a.txt"}`, "", "sigA")+","+call("bash", `{"command":"ls -l"}`, "", ""), "", []int{50, 20, 0, 0}) +
		chunkOf(call("noargs", `null`, "", ""), "STOP", []int{50, 25, 0, 0})
	m, err, types := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != llm.ToolUse || m.TextOf() != "Checking." {
		t.Errorf("stop %q text %q", m.StopReason, m.TextOf())
	}
	calls := m.ToolCalls()
	want := []struct{ name, args, sig string }{{"read", `{"path":"a.txt"}`, "sigA"}, {"bash", `{"command":"ls -l"}`, ""}, {"noargs", `{}`, ""}}
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	ids := map[string]bool{}
	for i, w := range want {
		c := calls[i]
		if c.Name != w.name || !providertest.SameJSON(string(c.Arguments), w.args) || c.ThoughtSignature != w.sig {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
		if !strings.HasPrefix(c.ID, syntheticPrefix) || ids[c.ID] {
			t.Errorf("call %d id %q: not a fresh made-up id", i, c.ID)
		}
		ids[c.ID] = true
	}
	// Each call is whole: start, one delta, end, in order, the text ended
	// before the first call.
	wantTypes := []llm.EventType{llm.EventStart, llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd}
	for range want {
		wantTypes = append(wantTypes, llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd)
	}
	wantTypes = append(wantTypes, llm.EventDone)
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestGemini3CallIDs(t *testing.T) {
	body := chunkOf(call("add", `{"a":2,"b":3}`, "8hd01vsf", "sig1"), "", nil) +
		chunkOf(call("multiply", `{"b":3,"a":2}`, "k0srpqrc", ""), "", nil) +
		chunkOf(text(""), "STOP", []int{157, 32, 438, 0})
	m, err, _ := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "8hd01vsf" || calls[1].ID != "k0srpqrc" || m.StopReason != llm.ToolUse {
		t.Errorf("calls %+v stop %q", calls, m.StopReason)
	}
	if len(m.Content) != 2 {
		t.Errorf("an empty text part made a block: %+v", m.Content)
	}
	if u := m.Usage; u.Input != 157 || u.Output != 32+438 {
		t.Errorf("usage %+v", u)
	}
}

func TestThinking(t *testing.T) {
	body := chunkOf(thought("**Plan**\n\nFirst "), "", nil) +
		chunkOf(`{"text":"then.","thought":true,"thoughtSignature":"tsig"}`, "", nil) +
		chunkOf(text("Answer"), "", nil) +
		chunkOf(text(" here."), "STOP", []int{10, 5, 40, 0})
	m, err, types := tested.Reply(t, body)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Content{
		{Type: llm.ThinkingType, Thinking: "**Plan**\n\nFirst then.", ThinkingSignature: "tsig"},
		{Type: llm.TextType, Text: "Answer here."},
	}
	if diff := cmp.Diff(want, m.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if i := indexOf(types, llm.EventThinkingEnd); i < 0 || i > indexOf(types, llm.EventTextStart) {
		t.Errorf("thinking did not end before the text began: %v", types)
	}
	if u := m.Usage; u.Output != 45 {
		t.Errorf("thinking tokens not counted as output: %+v", u)
	}
}

func indexOf(types []llm.EventType, t llm.EventType) int {
	for i, x := range types {
		if x == t {
			return i
		}
	}
	return -1
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		body string
		want llm.Usage
	}{
		{"last wins", chunkOf(text("a"), "", []int{100, 1, 0, 0}) + chunkOf(text("b"), "STOP", []int{100, 9, 3, 0}),
			llm.Usage{Input: 100, Output: 12, TotalTokens: 112}},
		{"cached", chunkOf(text("a"), "STOP", []int{1000, 10, 0, 800}),
			llm.Usage{Input: 200, CacheRead: 800, Output: 10, TotalTokens: 1010}},
		{"counts only at the end", chunkOf(text("a"), "", nil) + data(`{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":9,"totalTokenCount":54,"trafficType":"ON_DEMAND","thoughtsTokenCount":36,"toolUsePromptTokenCount":4}}`),
			llm.Usage{Input: 13, Output: 45, TotalTokens: 58}},
		{"vertex traffic type only", data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"finishReason":"STOP"}],"usageMetadata":{"trafficType":"ON_DEMAND"}}`),
			llm.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err, _ := tested.Reply(t, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == (llm.Usage{}) {
				if m.Usage != nil {
					t.Errorf("usage %+v, want none", m.Usage)
				}
				return
			}
			got := *m.Usage
			got.Cost = llm.Cost{}
			if got != tt.want {
				t.Errorf("usage %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		reason string
		want   llm.StopReason
		errHas string
	}{
		{"STOP", llm.Stop, ""},
		{"MAX_TOKENS", llm.Length, ""},
		{"SAFETY", llm.Error, "safety filters"},
		{"RECITATION", llm.Error, "reciting"},
		{"PROHIBITED_CONTENT", llm.Error, "prohibited content"},
		{"BLOCKLIST", llm.Error, "blocklist"},
		{"SPII", llm.Error, "personal information"},
		{"MALFORMED_FUNCTION_CALL", llm.Error, "malformed function call"},
		{"OTHER", llm.Error, "unstated reason"},
		{"FINISH_REASON_UNSPECIFIED", llm.Error, "abnormally"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			body := chunkOf(text("partial"), "", nil) + data(`{"candidates":[{"content":{"parts":[]},"finishReason":"`+tt.reason+`","finishMessage":"details here"}]}`)
			m, err, _ := tested.Reply(t, body)
			if m.StopReason != tt.want {
				t.Fatalf("stop %q, want %q (%v)", m.StopReason, tt.want, err)
			}
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) || !strings.Contains(err.Error(), tt.reason) ||
				!strings.HasPrefix(err.Error(), "google: ") || !strings.HasSuffix(err.Error(), ": details here") {
				t.Errorf("error %v", err)
			}
			if c := llm.Classify(err).Class; c != retry.Fatal {
				t.Errorf("classified %v", c)
			}
			if m.TextOf() != "partial" {
				t.Errorf("partial text lost: %q", m.TextOf())
			}
		})
	}
}

func TestErrorInStream(t *testing.T) {
	body := chunkOf(text("partial"), "", nil) +
		data(`{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34s"}]}}`)
	m, err, _ := tested.Reply(t, body)
	if m.StopReason != llm.Error || m.TextOf() != "partial" {
		t.Fatalf("stop %q text %q", m.StopReason, m.TextOf())
	}
	e, ok := llm.AsAPIError(err)
	if !ok || !e.MidStream || e.Code != "RESOURCE_EXHAUSTED" || !strings.Contains(e.Message, "exhausted") {
		t.Fatalf("error %#v", err)
	}
	if c := llm.Classify(err).Class; c != retry.Transient {
		t.Errorf("classified %v", c)
	}
	if h := retry.Hint(retry.FailureOf(err), timeNow()); h.Seconds() != 34 {
		t.Errorf("hint %v", h)
	}
}

func TestMalformed(t *testing.T) {
	start := chunkOf(text("so far"), "", nil)
	tested.Malformed(t, "google: decode chunk: ", []providertest.Malformed{
		{Name: "garbage mid-stream", Body: start + data(`{"candidates":[`) + chunkOf(text("x"), "STOP", nil)},
		{Name: "wrong type", Body: start + data(`{"candidates":{"content":1}}`) + chunkOf(text("x"), "STOP", nil)},
		{Name: "not JSON", Body: start + data(`[DONE]`) + chunkOf(text("x"), "STOP", nil)},
		{Name: "cut last chunk", Body: start + "data: {\"candidates\": [{\"content\": {\"par", Truncated: true},
		{Name: "no finish reason", Body: start + chunkOf(text("more"), "", []int{1, 2, 0, 0}), Truncated: true},
		{Name: "empty body", Body: "", Truncated: true},
	})
}
