package llmtest

import (
	"encoding/json"
	"strings"
)

// says reports whether a step has an answer of its own; one that has not
// is sent DefaultText, or what Server.Answer makes of the prompt.
func (s *Step) says() bool {
	return s.Text != "" || s.Thinking != "" || len(s.ToolCalls) > 0
}

// lastPrompt is the text of the last user message in a request body that
// has any, in every wire format: Chat Completions and Anthropic messages,
// Responses input (a string or items), Gemini contents. A tool result
// carries no text of its own, so a tool loop's requests keep answering the
// prompt that started it.
func lastPrompt(body []byte) string {
	var b struct {
		Messages []promptItem    `json:"messages"`
		Contents []promptItem    `json:"contents"`
		Input    json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	items := append(b.Messages, b.Contents...)
	if len(b.Input) > 0 {
		var s string
		if json.Unmarshal(b.Input, &s) == nil {
			return s
		}
		var in []promptItem
		_ = json.Unmarshal(b.Input, &in) // an unreadable input has no prompt
		items = append(items, in...)
	}
	for i := len(items) - 1; i >= 0; i-- {
		if it := items[i]; it.Role == "user" {
			if t := it.text(); t != "" {
				return t
			}
		}
	}
	return ""
}

// promptItem is one conversation entry of any wire format: content as a
// string or as parts with text (Chat Completions, Anthropic, Responses),
// or Gemini's parts.
type promptItem struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Parts   []promptPart    `json:"parts"`
}

type promptPart struct {
	Text string `json:"text"`
}

func (it promptItem) text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	parts := it.Parts
	var content []promptPart
	if json.Unmarshal(it.Content, &content) == nil {
		parts = append(content, parts...)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
