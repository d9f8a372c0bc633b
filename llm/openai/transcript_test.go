package openai

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
)

// want is what a correct parser assembles from a transcript.
type want struct {
	text, thinking string
	calls          []wantCall
	stop           llm.StopReason
	usage          *llm.Usage // nil: none reported
	errSub         string     // non-empty: the stream fails with this in its message
}

type wantCall struct{ id, name, args string }

// transcripts are real recorded streams kept byte for byte under testdata
// (sources in testdata/SOURCES.md).
var transcripts = []struct {
	file string
	api  string
	want want
}{
	{"openai-chat-parallel-tools.sse", "completions", want{
		calls: []wantCall{
			{"call_MBriMTSHw1UFtzQAduPP0Mkj", "add", `{"a": 2, "b": 3}`},
			{"call_7sVj20JsN3VYpXv8pZuLDruY", "multiply", `{"a": 2, "b": 3}`},
		},
		stop:  llm.ToolUse,
		usage: &llm.Usage{Input: 106, Output: 50, TotalTokens: 156},
	}},
	{"groq-text.sse", "completions", want{
		text:  "Oi!",
		stop:  llm.Stop,
		usage: &llm.Usage{Input: 20, Output: 3, TotalTokens: 23},
	}},
	{"llamacpp-tool-reasoning.sse", "completions", want{
		thinking: "The user asks for weather in Florence, Italy. We can use the weather function.",
		calls:    []wantCall{{"tNkZIM2wWGCzRoFvK6X0TdhHhAYj6fVY", "weather", `{"location":"Florence"}`}},
		stop:     llm.ToolUse,
		usage:    &llm.Usage{Input: 139, Output: 41, TotalTokens: 180},
	}},
	{"openai-responses-tool.sse", "responses", want{
		calls: []wantCall{{"call_PRiJm2RVAvt7IoRvjxIXxFVF", "weather", `{"location":"Florence, Italy"}`}},
		stop:  llm.ToolUse,
		usage: &llm.Usage{Input: 58, Output: 17, TotalTokens: 75},
	}},
	{"openai-responses-text.sse", "responses", want{
		text:  "Why did the scarecrow win an award?\n\nBecause he was outstanding in his field!",
		stop:  llm.Stop,
		usage: &llm.Usage{Input: 11, Output: 18, TotalTokens: 29},
	}},
}

func provider(api, base string) llm.Provider {
	if api == "responses" {
		return &Responses{ClientOptions: llm.ClientOptions{BaseURL: base, APIKey: testKey}}
	}
	return &Completions{ClientOptions: llm.ClientOptions{BaseURL: base, APIKey: testKey}}
}

func TestTranscripts(t *testing.T) {
	for _, tt := range transcripts {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := serveBytes(t, body)
			msg, err := run(t, provider(tt.api, srv.URL), request(llm.Model{ID: "m"}))
			if msg == nil {
				t.Fatalf("no stream: %v", err)
			}
			check(t, msg, err, tt.want)
		})
	}
}

// check compares an assembled message with what was expected.
func check(t *testing.T, msg *llm.Message, err error, w want) {
	t.Helper()
	if w.errSub != "" {
		truncated := w.errSub == "truncated" && errors.Is(err, llm.ErrTruncated)
		if err == nil || !truncated && !strings.Contains(err.Error(), w.errSub) && !hasCode(err, w.errSub) {
			t.Errorf("error %v, want one containing %q", err, w.errSub)
		}
	} else if err != nil {
		t.Errorf("unexpected error: %v", err)
	}
	if got := msg.TextOf(); got != w.text {
		t.Errorf("text %q, want %q", got, w.text)
	}
	var thinking string
	for _, c := range msg.Content {
		if c.Type == llm.ThinkingType {
			thinking += c.Thinking
		}
	}
	if thinking != w.thinking {
		t.Errorf("thinking %q, want %q", thinking, w.thinking)
	}
	calls := msg.ToolCalls()
	if len(calls) != len(w.calls) {
		t.Fatalf("%d tool calls, want %d: %+v", len(calls), len(w.calls), calls)
	}
	for i, c := range calls {
		wc := w.calls[i]
		if c.ID != wc.id || c.Name != wc.name || !providertest.SameJSON(string(c.Arguments), wc.args) {
			t.Errorf("call %d: %s %s %s, want %s %s %s", i, c.ID, c.Name, c.Arguments, wc.id, wc.name, wc.args)
		}
	}
	if msg.StopReason != w.stop {
		t.Errorf("stop %q, want %q", msg.StopReason, w.stop)
	}
	switch {
	case w.usage == nil && msg.Usage != nil:
		t.Errorf("usage %+v, want none", *msg.Usage)
	case w.usage != nil && msg.Usage == nil:
		t.Errorf("no usage, want %+v", *w.usage)
	case w.usage != nil:
		u := *msg.Usage
		u.Cost = llm.Cost{}
		if u != *w.usage {
			t.Errorf("usage %+v, want %+v", u, *w.usage)
		}
	}
}

// hasCode reports an *llm.APIError whose type or code is code.
func hasCode(err error, code string) bool {
	ae, ok := llm.AsAPIError(err)
	return ok && (ae.Type == code || ae.Code == code)
}
