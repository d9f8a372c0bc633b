package anthropic

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

// signatures returns the thinking signatures of m.
func signatures(m *llm.Message) []string {
	var s []string
	for _, c := range m.Content {
		if c.Type == llm.ThinkingType {
			s = append(s, c.ThinkingSignature)
		}
	}
	return s
}

func TestTranscripts(t *testing.T) {
	tokens := providertest.Tokens
	type call = providertest.Call
	tests := []struct {
		file string
		want providertest.Want
		// signatures are those of the thinking blocks, which only
		// Anthropic's transcripts pin down.
		signatures []string
	}{
		{"sdk-python-basic.sse", providertest.Want{Text: "Hello there!", Stop: llm.Stop, Usage: tokens(11, 6)}, nil},
		{"sdk-python-tool-use.sse", providertest.Want{
			Text:  "I'll check the current weather in Paris for you.",
			Calls: []call{{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Args: `{"location": "Paris"}`}},
			Stop:  llm.ToolUse, Usage: tokens(377, 65)}, nil},
		{"sdk-python-refusal.sse", providertest.Want{Stop: llm.Error, Usage: tokens(20, 120),
			ErrType: "refusal", ErrHas: "This request was refused due to policy.", Class: retry.Fatal}, nil},
		{"sdk-python-server-tool-use.sse", providertest.Want{Text: "Let me search for that.", Stop: llm.Stop, Usage: tokens(42, 40)}, nil},
		{"pydantic-ai-redacted-thinking.sse", providertest.Want{
			Text: "I notice that you've sent what appears to be some kind of test string or command. I don't have any special \"magic string\" triggers or backdoor commands that would expose internal systems or change my behavior.\n\nI'm Claude, an AI assistant created by Anthropic to be helpful, harmless, and honest. How can I assist you today with a legitimate task or question?",
			Stop: llm.Stop, Usage: tokens(92, 189)}, []string{
			"EqkECkYIBxgCKkA8AZ4noDfV5VcOJe/p3JTRB6Xz5297mrWhl3MbHSXDKTMfuB/Z52U2teiWWTN0gg4eQ4bGS9TPilFX/xWTIq9HEgyOmstSPriNwyn1G7AaDC51r0hQ062qEd55IiIwYQj3Z3MSBBv0bSVdXi60LEHDvC7tzzmpQfw5Hb6R9rtyOz/6vC/xPw9/E1mUqfBqKpADO2HS2QlE/CnuzR901nZOn0TOw7kEXwH7kg30c85b9W7iKALgEejY9sELMBdPyIZNlTgKqNOKtY3R/aV5rGIRPTHh2Wh9Ijmqsf/TT7i//Z+InaYTo6f/fxF8R0vFXMRPOBME4XIscb05HcNhh4c9FDkpqQGYKaq31IR1NNwPWA0BsvdDz7SIo1nfx4H+X0qKKqqegKnQ3ynaXiD5ydT1C4U7fku4ftgF0LGwIk4PwXBE+4BP0DcKr1HV3cn7YSyNakBSDTvRJMKcXW6hl7X3w2a4//sxjC1Cjq0uzkIHkhzRWirN0OSXt+g3m6b1ex0wGmSyuO17Ak6kgVBpxwPugtrqsflG0oujFem44hecXJ9LQNssPf4RSlcydiG8EXp/XLGTe0YfHbe3kJagkowSH/Dm6ErXBiVs7249brncyY8WA+7MOoqIM82YIU095B9frCqDJDUWnN84VwOszRrcaywmpJXZO4aeQLMC1kXD5Wabu+O/00tD/X67EWkkWuR0AhDIXXjpot45vnBd4ewJ/hgB",
			"EtgBCkYIBxgCKkDQfGkwzflEJP5asG3oQfJXcTwJLoRznn8CmuczWCsJ36dv93X9H0NCeaJRbi5BrCA2DyMgFnRKRuzZx8VTv5axEgwkFmcHJk8BSiZMZRQaDDYv2KZPfbFgRa2QjyIwm47f5YYsSK9CT/oh/WWpU1HJJVHr8lrC6HG1ItRdtMvYQYmEGy+KhyfcIACfbssVKkDGv/NKqNMOAcu0bd66gJ2+R1R0PX11Jxn2Nd1JtZqkxx7vMT/PXtHDhm9jkDZ2k/6RjRRFuab/DBV3yRYdZ1J0GAE=",
		}},
		{"docs-extended-thinking.sse", providertest.Want{
			Thinking: "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231",
			Text:     "27 * 453 = 12,231", Stop: llm.Stop, Usage: tokens(0, 0)},
			[]string{"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."}},
		{"docs-tool-use.sse", providertest.Want{
			Text:  "Okay, let's check the weather for San Francisco, CA:",
			Calls: []call{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Args: `{"location": "San Francisco, CA", "unit": "fahrenheit"}`}},
			Stop:  llm.ToolUse, Usage: tokens(472, 89)}, nil},
		{"docs-error-overloaded.sse", providertest.Want{Stop: llm.Error, ErrType: "overloaded_error", ErrHas: "Overloaded", Class: retry.Transient}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := api.ServeFile(t, filepath.Join("testdata", tt.file), http.StatusOK)
			m, err, _ := providertest.Run(t, client(s), ask("hi"))
			providertest.Check(t, m, err, tt.want)
			if got := signatures(m); strings.Join(got, " ") != strings.Join(tt.signatures, " ") {
				t.Errorf("signatures %q, want %q", got, tt.signatures)
			}
		})
	}
}

// TestReferenceWire replays the shared reference captures, when this
// machine has them, against their recorded expectations.
func TestReferenceWire(t *testing.T) {
	refs := providertest.References(t, func(r *providertest.Reference) bool { return r.Provider == "anthropic" })
	for _, r := range refs {
		t.Run(r.File, func(t *testing.T) {
			x := r.Expected
			w := providertest.Want{Text: x.Text, Thinking: x.Reasoning, Stop: llm.Stop}
			for _, c := range x.ToolCalls {
				w.Calls = append(w.Calls, providertest.Call{ID: c.ID, Name: c.Name, Args: c.Args})
			}
			if x.StopReason != nil {
				switch *x.StopReason {
				case "tool_use":
					w.Stop = llm.ToolUse
				case "max_tokens":
					w.Stop = llm.Length
				}
			}
			if u := x.Usage; u != nil {
				w.Usage = &llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
			}
			if e := x.Error; e != nil {
				w.Stop, w.ErrType, w.ErrHas, w.Class = llm.Error, e.Type, e.Message, retry.Transient
			}
			m, err, _ := providertest.Run(t, client(api.ServeFile(t, r.Path(), r.Status)), ask("hi"))
			providertest.Check(t, m, err, w)
		})
	}
}
