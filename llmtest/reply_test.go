package llmtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

func TestReplyEveryAPI(t *testing.T) {
	step := llmtest.Step{
		Thinking:  "Let me think about <this> & that.",
		Text:      "Hello brave new world",
		ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a.go","limit":10}`}, {Name: "bash", Arguments: `{"command":"ls"}`, Chunks: 2}},
		Usage:     &llmtest.Usage{Input: 100, Output: 20, CacheRead: 30, CacheWrite: 5},
	}
	wantStop := map[llmtest.API]string{
		llmtest.OpenAICompletions:  "tool_calls",
		llmtest.OpenAIResponses:    "completed",
		llmtest.AnthropicMessages:  "tool_use",
		llmtest.GoogleGenerativeAI: "STOP",
	}
	// The prompt total each provider reports: OpenAI and Gemini count
	// cached tokens inside it, Anthropic apart.
	wantInput := map[llmtest.API][2]string{
		llmtest.OpenAICompletions:  {"prompt_tokens", "130"},
		llmtest.OpenAIResponses:    {"input_tokens", "130"},
		llmtest.AnthropicMessages:  {"input_tokens", "100"},
		llmtest.GoogleGenerativeAI: {"promptTokenCount", "130"},
	}
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s := llmtest.NewServer(t, step)
			resp := mustPost(t, s.URL, api)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			evs, err := readAll(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			r := assemble(t, api, evs)
			if r.text != step.Text || r.thinking != step.Thinking {
				t.Errorf("text %q thinking %q", r.text, r.thinking)
			}
			if !r.terminal || r.stop != wantStop[api] {
				t.Errorf("terminal %v stop %q, want %q", r.terminal, r.stop, wantStop[api])
			}
			if len(r.tools) != 2 {
				t.Fatalf("tools %+v", r.tools)
			}
			for i, tc := range r.tools {
				if tc.name != step.ToolCalls[i].Name || !sameJSON(t, tc.args, step.ToolCalls[i].Arguments) {
					t.Errorf("tool %d: %+v", i, tc)
				}
				if api != llmtest.GoogleGenerativeAI && tc.id == "" {
					t.Errorf("tool %d has no id", i)
				}
			}
			k := wantInput[api]
			if got, _ := json.Marshal(r.usage[k[0]]); string(got) != k[1] {
				t.Errorf("usage %s = %s, want %s (usage %v)", k[0], got, k[1], r.usage)
			}
			if strings.Contains(string(raw), `\u003c`) || strings.Contains(string(raw), `\u0026`) {
				t.Error("text was HTML-escaped; providers send it as is")
			}
			checkFraming(t, api, raw)
		})
	}
}

// checkFraming checks each format's own framing habits.
func checkFraming(t *testing.T, api llmtest.API, raw []byte) {
	t.Helper()
	s := string(raw)
	switch api {
	case llmtest.OpenAICompletions:
		if !strings.HasSuffix(s, "data: [DONE]\n\n") || strings.Contains(s, "event:") {
			t.Errorf("chat framing:\n%s", s)
		}
		if !strings.Contains(s, `"choices":[],"usage":{`) {
			t.Error("no usage chunk with empty choices despite include_usage")
		}
	case llmtest.OpenAIResponses:
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
	case llmtest.AnthropicMessages:
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
	case llmtest.GoogleGenerativeAI:
		if strings.Count(s, "\r\n\r\n") != strings.Count(s, "data: ") || strings.Contains(s, "event:") || strings.Contains(s, "[DONE]") {
			t.Errorf("gemini framing (CRLF, data only):\n%q", s)
		}
		if !strings.Contains(s, `"thought":true`) || !strings.Contains(s, `"args":{"path":"a.go","limit":10}`) {
			t.Errorf("gemini parts:\n%s", s)
		}
	}
}

func TestDefaultReplyAndChunks(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Step{}, llmtest.Step{Text: "abcdefgh", Chunks: 4})
	for i, want := range []struct {
		text   string
		deltas int
	}{{llmtest.DefaultText, len(strings.Fields(llmtest.DefaultText))}, {"abcdefgh", 4}, {"abcdefgh", 4}} {
		resp := mustPost(t, s.URL, llmtest.AnthropicMessages)
		evs, err := readAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r := assemble(t, llmtest.AnthropicMessages, evs)
		if r.text != want.text || r.deltas != want.deltas || r.stop != "end_turn" {
			t.Errorf("request %d: text %q in %d chunks, stop %q", i+1, r.text, r.deltas, r.stop)
		}
	}
}

func TestStopReasons(t *testing.T) {
	want := map[llmtest.API]string{
		llmtest.OpenAICompletions:  "length",
		llmtest.OpenAIResponses:    "incomplete",
		llmtest.AnthropicMessages:  "max_tokens",
		llmtest.GoogleGenerativeAI: "MAX_TOKENS",
	}
	for _, api := range llmtest.APIs() {
		// Only reasoning and a length stop: every token went to thinking.
		s := llmtest.NewServer(t, llmtest.Step{Thinking: "thinking hard", Stop: "length"})
		evs, err := readAll(mustPost(t, s.URL, api).Body)
		if err != nil {
			t.Fatal(err)
		}
		if r := assemble(t, api, evs); r.stop != want[api] || r.text != "" || r.thinking != "thinking hard" {
			t.Errorf("%s: stop %q text %q thinking %q", api, r.stop, r.text, r.thinking)
		}
	}
}

func TestDelayIsPerChunk(t *testing.T) {
	const d = 15 * time.Millisecond
	s := llmtest.NewServer(t, llmtest.Step{Text: "one two three", Delay: d})
	start := time.Now()
	if _, err := readAll(mustPost(t, s.URL, llmtest.OpenAICompletions).Body); err != nil {
		t.Fatal(err)
	}
	// Timers never fire early, so three chunks take at least 3d.
	if el := time.Since(start); el < 3*d {
		t.Errorf("three chunks with %v delay took %v", d, el)
	}
}

func TestUnknownPathTakesNoStep(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Step{Error: llmtest.Auth}, llmtest.Step{})
	resp, err := http.Get(s.URL + "/v1/files")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/files: %d", resp.StatusCode)
	}
	if resp := mustPost(t, s.URL, llmtest.OpenAICompletions); resp.StatusCode != 401 {
		t.Errorf("first API request got %d, want the first step's 401", resp.StatusCode)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Step != 0 || reqs[0].Outcome != "http 404" || reqs[1].Step != 1 {
		t.Errorf("requests %+v", reqs)
	}
}
