package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPresetDemos: what the README says of the --preset demos holds in
// RPC mode, where the fake model is started before any prompt: the
// overflow demo's model has the 4,096-token window it claims (get_state
// said 128000), and each prompt gets its own answer (every prompt got
// the sim's answer to an empty one).
func TestPresetDemos(t *testing.T) {
	cases := []struct {
		preset  string
		window  int
		prompts []string
		answers []string
	}{
		{"overflow", presetWindow, []string{"What does rally do?"}, []string{"rally runs LLM agent sessions"}},
		{"flaky", unknownContextWindow, []string{"What does rally do?", "hello there"},
			[]string{"rally runs LLM agent sessions", `You asked: "hello there".`}},
	}
	for _, c := range cases {
		t.Run(c.preset, func(t *testing.T) {
			isolate(t)
			p := startRPC(t, "--no-session", "--preset", c.preset)
			var state struct {
				Model struct {
					ContextWindow int `json:"contextWindow"`
				} `json:"model"`
			}
			b, _ := json.Marshal(p.call("s", `{"type":"get_state"}`)["data"])
			if err := json.Unmarshal(b, &state); err != nil || state.Model.ContextWindow != c.window {
				t.Errorf("get_state: contextWindow %d (%v), want %d", state.Model.ContextWindow, err, c.window)
			}
			for i, prompt := range c.prompts {
				msg, _ := json.Marshal(prompt)
				p.call(fmt.Sprint("p", i), `{"type":"prompt","message":`+string(msg)+`}`)
				end := p.until("the answer", func(m map[string]any) bool {
					msg, _ := m["message"].(map[string]any)
					return m["type"] == "message_end" && msg["role"] == "assistant" && msg["stopReason"] == "stop"
				})
				var answer struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				b, _ := json.Marshal(end["message"])
				if err := json.Unmarshal(b, &answer); err != nil || len(answer.Content) == 0 || !strings.Contains(answer.Content[0].Text, c.answers[i]) {
					t.Errorf("prompt %q: answer %s, want it to contain %q", prompt, b, c.answers[i])
				}
				p.event("agent_settled")
			}
		})
	}
}
