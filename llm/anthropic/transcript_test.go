package anthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// call is an expected tool call; Args is compared as JSON values.
type call struct{ ID, Name, Args string }

type want struct {
	text, thinking string
	signatures     []string
	calls          []call
	stop           llm.StopReason
	usage          *llm.Usage // Input, Output, CacheRead, CacheWrite only
	errType        string     // for an *llm.APIError
	errHas         string
	class          retry.Class
}

// serveFile answers with the file's bytes as an event stream, unchanged.
func serveFile(t *testing.T, path string, status int) *server {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		w.Write(body)
	})
}

// check compares a streamed message (or the error of Stream) with w.
func check(t *testing.T, m *llm.Message, err error, w want) {
	t.Helper()
	if w.errType != "" || w.errHas != "" {
		if err == nil {
			t.Fatalf("no error; stop %q", m.StopReason)
		}
		if e, ok := llm.AsAPIError(err); w.errType != "" && (!ok || e.Type != w.errType) {
			t.Errorf("error %#v, want type %q", err, w.errType)
		}
		if !strings.Contains(err.Error(), w.errHas) {
			t.Errorf("error %q lacks %q", err, w.errHas)
		}
		if c := llm.Classify(err).Class; c != w.class {
			t.Errorf("classified %v, want %v", c, w.class)
		}
	} else if err != nil {
		t.Fatalf("error %v", err)
	}
	if m == nil {
		return
	}
	if m.StopReason != w.stop {
		t.Errorf("stop %q, want %q", m.StopReason, w.stop)
	}
	if got := m.TextOf(); got != w.text {
		t.Errorf("text %q, want %q", got, w.text)
	}
	var thinking string
	var sigs []string
	for _, c := range m.Content {
		if c.Type == llm.ThinkingType {
			thinking += c.Thinking
			sigs = append(sigs, c.ThinkingSignature)
		}
	}
	if thinking != w.thinking {
		t.Errorf("thinking %q, want %q", thinking, w.thinking)
	}
	if strings.Join(sigs, " ") != strings.Join(w.signatures, " ") {
		t.Errorf("signatures %q, want %q", sigs, w.signatures)
	}
	calls := m.ToolCalls()
	if len(calls) != len(w.calls) {
		t.Fatalf("tool calls %+v, want %+v", calls, w.calls)
	}
	for i, c := range w.calls {
		got := calls[i]
		if (c.ID != "" && got.ID != c.ID) || got.ID == "" || got.Name != c.Name || !sameJSON(string(got.Arguments), c.Args) {
			t.Errorf("call %d = %s %s %s, want %+v", i, got.ID, got.Name, got.Arguments, c)
		}
	}
	switch {
	case w.usage == nil && m.Usage != nil:
		t.Errorf("usage %+v, want none", m.Usage)
	case w.usage != nil && m.Usage == nil:
		t.Errorf("no usage, want %+v", w.usage)
	case w.usage != nil:
		u := *m.Usage
		if u.Input != w.usage.Input || u.Output != w.usage.Output || u.CacheRead != w.usage.CacheRead || u.CacheWrite != w.usage.CacheWrite {
			t.Errorf("usage %+v, want %+v", u, *w.usage)
		}
		if u.TotalTokens != u.Input+u.Output+u.CacheRead+u.CacheWrite {
			t.Errorf("total tokens %d", u.TotalTokens)
		}
	}
}

func tokens(in, out int) *llm.Usage { return &llm.Usage{Input: in, Output: out} }

func TestTranscripts(t *testing.T) {
	tests := []struct {
		file string
		want want
	}{
		{"sdk-python-basic.sse", want{text: "Hello there!", stop: llm.Stop, usage: tokens(11, 6)}},
		{"sdk-python-tool-use.sse", want{
			text:  "I'll check the current weather in Paris for you.",
			calls: []call{{"toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", `{"location": "Paris"}`}},
			stop:  llm.ToolUse, usage: tokens(377, 65)}},
		{"sdk-python-refusal.sse", want{stop: llm.Error, usage: tokens(20, 120),
			errType: "refusal", errHas: "This request was refused due to policy.", class: retry.Fatal}},
		{"sdk-python-server-tool-use.sse", want{text: "Let me search for that.", stop: llm.Stop, usage: tokens(42, 40)}},
		{"pydantic-ai-redacted-thinking.sse", want{
			text: "I notice that you've sent what appears to be some kind of test string or command. I don't have any special \"magic string\" triggers or backdoor commands that would expose internal systems or change my behavior.\n\nI'm Claude, an AI assistant created by Anthropic to be helpful, harmless, and honest. How can I assist you today with a legitimate task or question?",
			signatures: []string{
				"EqkECkYIBxgCKkA8AZ4noDfV5VcOJe/p3JTRB6Xz5297mrWhl3MbHSXDKTMfuB/Z52U2teiWWTN0gg4eQ4bGS9TPilFX/xWTIq9HEgyOmstSPriNwyn1G7AaDC51r0hQ062qEd55IiIwYQj3Z3MSBBv0bSVdXi60LEHDvC7tzzmpQfw5Hb6R9rtyOz/6vC/xPw9/E1mUqfBqKpADO2HS2QlE/CnuzR901nZOn0TOw7kEXwH7kg30c85b9W7iKALgEejY9sELMBdPyIZNlTgKqNOKtY3R/aV5rGIRPTHh2Wh9Ijmqsf/TT7i//Z+InaYTo6f/fxF8R0vFXMRPOBME4XIscb05HcNhh4c9FDkpqQGYKaq31IR1NNwPWA0BsvdDz7SIo1nfx4H+X0qKKqqegKnQ3ynaXiD5ydT1C4U7fku4ftgF0LGwIk4PwXBE+4BP0DcKr1HV3cn7YSyNakBSDTvRJMKcXW6hl7X3w2a4//sxjC1Cjq0uzkIHkhzRWirN0OSXt+g3m6b1ex0wGmSyuO17Ak6kgVBpxwPugtrqsflG0oujFem44hecXJ9LQNssPf4RSlcydiG8EXp/XLGTe0YfHbe3kJagkowSH/Dm6ErXBiVs7249brncyY8WA+7MOoqIM82YIU095B9frCqDJDUWnN84VwOszRrcaywmpJXZO4aeQLMC1kXD5Wabu+O/00tD/X67EWkkWuR0AhDIXXjpot45vnBd4ewJ/hgB",
				"EtgBCkYIBxgCKkDQfGkwzflEJP5asG3oQfJXcTwJLoRznn8CmuczWCsJ36dv93X9H0NCeaJRbi5BrCA2DyMgFnRKRuzZx8VTv5axEgwkFmcHJk8BSiZMZRQaDDYv2KZPfbFgRa2QjyIwm47f5YYsSK9CT/oh/WWpU1HJJVHr8lrC6HG1ItRdtMvYQYmEGy+KhyfcIACfbssVKkDGv/NKqNMOAcu0bd66gJ2+R1R0PX11Jxn2Nd1JtZqkxx7vMT/PXtHDhm9jkDZ2k/6RjRRFuab/DBV3yRYdZ1J0GAE=",
			},
			stop: llm.Stop, usage: tokens(92, 189)}},
		{"docs-extended-thinking.sse", want{
			thinking:   "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231",
			signatures: []string{"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."},
			text:       "27 * 453 = 12,231", stop: llm.Stop, usage: tokens(0, 0)}},
		{"docs-tool-use.sse", want{
			text:  "Okay, let's check the weather for San Francisco, CA:",
			calls: []call{{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"location": "San Francisco, CA", "unit": "fahrenheit"}`}},
			stop:  llm.ToolUse, usage: tokens(472, 89)}},
		{"docs-error-overloaded.sse", want{stop: llm.Error, errType: "overloaded_error", errHas: "Overloaded", class: retry.Transient}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := serveFile(t, filepath.Join("testdata", tt.file), http.StatusOK)
			m, err, _ := run(t, client(s), ask("hi"))
			check(t, m, err, tt.want)
		})
	}
}

// TestReferenceWire replays the shared reference captures, when this
// machine has them, against their recorded expectations.
func TestReferenceWire(t *testing.T) {
	const dir = "/work/shared/reference-wire"
	f, err := os.Open(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		t.Skip("no reference captures here")
	}
	defer f.Close()
	type ref struct {
		File     string `json:"file"`
		Provider string `json:"provider"`
		Status   int    `json:"http_status"`
		Expected struct {
			Text      string `json:"text"`
			Reasoning string `json:"reasoning"`
			ToolCalls []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				Args string `json:"arguments_json"`
			} `json:"tool_calls"`
			StopReason *string `json:"stop_reason"`
			Usage      *struct {
				Input      int `json:"input_tokens"`
				Output     int `json:"output_tokens"`
				CacheRead  int `json:"cache_read_input_tokens"`
				CacheWrite int `json:"cache_creation_input_tokens"`
			} `json:"usage"`
			Error *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"expected"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ref
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Provider != "anthropic" {
			continue
		}
		t.Run(r.File, func(t *testing.T) {
			x := r.Expected
			w := want{text: x.Text, thinking: x.Reasoning, stop: llm.Stop}
			for _, c := range x.ToolCalls {
				w.calls = append(w.calls, call{c.ID, c.Name, c.Args})
			}
			if x.StopReason != nil {
				switch *x.StopReason {
				case "tool_use":
					w.stop = llm.ToolUse
				case "max_tokens":
					w.stop = llm.Length
				}
			}
			if u := x.Usage; u != nil {
				w.usage = &llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
			}
			if e := x.Error; e != nil {
				w.stop, w.errType, w.errHas, w.class = llm.Error, e.Type, e.Message, retry.Transient
			}
			s := serveFile(t, filepath.Join(dir, r.File), r.Status)
			m, err, _ := run(t, client(s), ask("hi"))
			w.signatures = signatures(m)
			check(t, m, err, w)
		})
	}
}

// signatures returns the thinking signatures of m, which the reference
// index does not record.
func signatures(m *llm.Message) []string {
	var s []string
	for _, c := range m.Content {
		if c.Type == llm.ThinkingType {
			s = append(s, c.ThinkingSignature)
		}
	}
	return s
}
