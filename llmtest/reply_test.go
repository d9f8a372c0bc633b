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
			f := formatOf(t, api)
			if !r.terminal || r.stop != f.toolStop {
				t.Errorf("terminal %v stop %q, want %q", r.terminal, r.stop, f.toolStop)
			}
			if len(r.tools) != 2 {
				t.Fatalf("tools %+v", r.tools)
			}
			for i, tc := range r.tools {
				if tc.name != step.ToolCalls[i].Name || !sameJSON(t, tc.args, step.ToolCalls[i].Arguments) {
					t.Errorf("tool %d: %+v", i, tc)
				}
				if !f.noToolIDs && tc.id == "" {
					t.Errorf("tool %d has no id", i)
				}
			}
			if got, _ := json.Marshal(r.usage[f.inputKey]); string(got) != f.inputTotal {
				t.Errorf("usage %s = %s, want %s (usage %v)", f.inputKey, got, f.inputTotal, r.usage)
			}
			if strings.Contains(string(raw), `\u003c`) || strings.Contains(string(raw), `\u0026`) {
				t.Error("text was HTML-escaped; providers send it as is")
			}
			f.framing(t, string(raw))
		})
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
	for _, api := range llmtest.APIs() {
		// Only reasoning and a length stop: every token went to thinking.
		s := llmtest.NewServer(t, llmtest.Step{Thinking: "thinking hard", Stop: "length"})
		evs, err := readAll(mustPost(t, s.URL, api).Body)
		if err != nil {
			t.Fatal(err)
		}
		if r := assemble(t, api, evs); r.stop != formats[api].lengthStop || r.text != "" || r.thinking != "thinking hard" {
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
