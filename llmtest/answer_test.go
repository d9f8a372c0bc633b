package llmtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestAnswerFollowsThePrompt: with Server.Answer, a step without an answer
// of its own answers the request's last user message, in every wire
// format and in each shape a message's text comes in; a step with its own
// text keeps it.
func TestAnswerFollowsThePrompt(t *testing.T) {
	cases := []struct {
		name string
		api  llmtest.API
		body string
	}{
		{"chat, string content", llmtest.OpenAICompletions,
			`{"model":"m","stream":true,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"what does rally do?"}]}`},
		{"chat, parts, after a tool result", llmtest.OpenAICompletions,
			`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"what does "},{"type":"text","text":"rally do?"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"a.txt"}]}`},
		{"responses, a string", llmtest.OpenAIResponses,
			`{"model":"m","stream":true,"input":"what does rally do?"}`},
		{"responses, items", llmtest.OpenAIResponses,
			`{"model":"m","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"what does rally do?"}]},{"type":"function_call_output","call_id":"c1","output":"a.txt"}]}`},
		{"anthropic, a tool result after the prompt", llmtest.AnthropicMessages,
			`{"model":"m","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"what does rally do?"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt"}]}]}`},
		{"gemini", llmtest.GoogleGenerativeAI,
			`{"contents":[{"role":"user","parts":[{"text":"what does rally do?"}]}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := llmtest.New(llmtest.Step{}, llmtest.Step{Text: "its own"})
			s.Answer = func(prompt string) string { return "you asked: " + prompt }
			s.Start(t)
			for _, want := range []string{"you asked: what does rally do?", "its own"} {
				resp, err := http.Post(s.URL+pathFor(c.api), "application/json", strings.NewReader(c.body))
				if err != nil {
					t.Fatal(err)
				}
				evs, err := readAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got := assemble(t, c.api, evs).text; got != want {
					t.Errorf("answer %q, want %q", got, want)
				}
			}
		})
	}
}
