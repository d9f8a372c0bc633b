package anthropic

import (
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// The request body of POST /v1/messages, only the fields rally sends.
type request struct {
	Model     string     `json:"model"`
	MaxTokens int        `json:"max_tokens"`
	System    []block    `json:"system,omitempty"`
	Messages  []message  `json:"-"` // List
	Tools     []tool     `json:"tools,omitempty"`
	Stream    bool       `json:"stream"`
	Thinking  *thinkingC `json:"thinking,omitempty"`
}

// List is the conversation, encoded element by element (httpcall.Lister).
func (r *request) List() (string, iter.Seq[any]) { return "messages", httpcall.Items(r.Messages) }

type thinkingC struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is every content block rally sends; only the fields of its Type
// are set.
type block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// image
	Source *source `json:"source,omitempty"`
	// thinking / redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// minOutput is what is left for the visible answer when a thinking budget
// has to be cut to fit max_tokens.
const minOutput = 1024

func newRequest(req *llm.Request) (*request, error) {
	if req.Model.ID == "" {
		return nil, errors.New("request has no model")
	}
	r := &request{Model: req.Model.ID, Stream: true, MaxTokens: req.MaxTokens}
	if r.MaxTokens <= 0 {
		r.MaxTokens = req.Model.MaxTokens
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	if budget := httpcall.ThinkingBudget(req.Thinking); budget > 0 && req.Model.Reasoning {
		// max_tokens counts thinking too: raise it by the budget so the
		// visible answer keeps its cap, within what the model allows.
		r.MaxTokens += budget
		if m := req.Model.MaxTokens; m > 0 && r.MaxTokens > m {
			r.MaxTokens = m
		}
		if r.MaxTokens <= budget {
			budget = r.MaxTokens - minOutput
		}
		// The API's minimum budget is the minimal level's.
		if budget >= httpcall.ThinkingBudget("minimal") {
			r.Thinking = &thinkingC{Type: "enabled", BudgetTokens: budget}
		}
	}
	if req.System != "" {
		r.System = []block{{Type: "text", Text: req.System}}
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: httpcall.Schema(t.Parameters)})
	}
	r.Messages = messages(req.Messages)
	if r.Thinking != nil && unsignedLoop(r.Messages) {
		// With thinking on, the API wants every answer of the current tool
		// loop to start with its signed thinking, which an answer from
		// another model cannot have: think again from the next turn on.
		r.Thinking = nil
	}
	cache(r)
	return r, nil
}

// unsignedLoop reports whether an assistant message of the current tool
// loop (after the last message the user typed) starts with anything but
// thinking.
func unsignedLoop(ms []message) bool {
	for i := len(ms) - 1; i >= 0; i-- {
		m := &ms[i]
		if m.Role == "user" {
			if !isToolResults(m.Content) {
				return false
			}
			continue
		}
		if t := m.Content[0].Type; t != "thinking" && t != "redacted_thinking" {
			return true
		}
	}
	return false
}

// messages converts the conversation, mended by httpcall.Repair: the API
// refuses a conversation whose tool calls and results do not pair up, and
// empty messages. Tool results become user-role tool_result blocks,
// consecutive ones in one message as the API wants for parallel calls.
// Ids are compared as toolID makes them, since that is what the API sees.
func messages(in []llm.Message) []message {
	in = httpcall.Repair(in, sendable, toolID)
	out := make([]message, 0, len(in))
	for i := range in {
		m := &in[i]
		switch m.Role {
		case llm.User:
			out = append(out, message{Role: "user", Content: userContent(m.Content)})
		case llm.Assistant:
			out = append(out, message{Role: "assistant", Content: assistantContent(m)})
		case llm.ToolResult:
			out = addResult(out, block{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: userContent(m.Content), IsError: m.IsError})
		}
	}
	return out
}

// sendable reports whether a message other than a tool result converts to
// any content: the API refuses an empty message.
func sendable(m *llm.Message) bool {
	for _, c := range m.Content {
		var ok bool
		switch m.Role {
		case llm.User:
			_, ok = userBlock(c)
		case llm.Assistant:
			_, ok = assistantBlock(c, m.API == llm.APIAnthropicMessages)
		}
		if ok {
			return true // stop at the first: converting is for the request
		}
	}
	return false
}

// addResult appends a tool result to the user message of results that
// ends out, or starts one.
func addResult(out []message, res block) []message {
	if n := len(out); n > 0 && out[n-1].Role == "user" && isToolResults(out[n-1].Content) {
		out[n-1].Content = append(out[n-1].Content, res)
		return out
	}
	return append(out, message{Role: "user", Content: []block{res}})
}

func isToolResults(bs []block) bool {
	return len(bs) > 0 && bs[len(bs)-1].Type == "tool_result"
}

func userContent(cs []llm.Content) []block {
	var out []block
	for i, c := range cs {
		if b, ok := userBlock(c); ok {
			if out == nil {
				out = make([]block, 0, len(cs)-i) // at most the rest
			}
			out = append(out, b)
		}
	}
	return out
}

// userBlock converts one block of a user message or tool result; ok is
// false for one that is not sent.
func userBlock(c llm.Content) (b block, ok bool) {
	switch c.Type {
	case llm.TextType:
		if strings.TrimSpace(c.Text) != "" {
			return block{Type: "text", Text: c.Text}, true
		}
	case llm.ImageType:
		return block{Type: "image", Source: &source{Type: "base64", MediaType: c.MimeType, Data: c.Data}}, true
	}
	return block{}, false
}

// assistantContent converts an earlier answer. Thinking goes back only
// with an Anthropic signature (the API verifies it); a thinking block with a
// signature and no text is a redacted one. Unsigned thinking, from another
// provider or cut by an error, is dropped: the model does not need it.
func assistantContent(m *llm.Message) []block {
	var out []block
	signed := m.API == llm.APIAnthropicMessages
	for i, c := range m.Content {
		if b, ok := assistantBlock(c, signed); ok {
			if out == nil {
				out = make([]block, 0, len(m.Content)-i) // at most the rest
			}
			out = append(out, b)
		}
	}
	return out
}

// assistantBlock converts one block of an answer; ok is false for one
// that is not sent.
func assistantBlock(c llm.Content, signed bool) (b block, ok bool) {
	switch c.Type {
	case llm.TextType:
		if strings.TrimSpace(c.Text) != "" {
			return block{Type: "text", Text: c.Text}, true
		}
	case llm.ThinkingType:
		switch {
		case !signed || c.ThinkingSignature == "":
		case c.Thinking == "":
			return block{Type: "redacted_thinking", Data: c.ThinkingSignature}, true
		default:
			return block{Type: "thinking", Thinking: c.Thinking, Signature: c.ThinkingSignature}, true
		}
	case llm.ToolCallType:
		return block{Type: "tool_use", ID: toolID(c.ID), Name: c.Name, Input: httpcall.Object(c.Arguments)}, true
	}
	return block{}, false
}

func idChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func validToolID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return false
		}
	}
	return true
}

// toolID makes a tool-call id acceptable to the API (^[a-zA-Z0-9_-]{1,64}$):
// calls made by other providers carry ids like "call_1|fc_2". The same id
// always maps to the same result, so a call and its result still match.
func toolID(id string) string {
	if id == "" {
		return "toolu_none"
	}
	if validToolID(id) {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if !idChar(c) {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// cache marks the system prompt and the conversation's last block for
// prompt caching, so each turn of an agent session reads the prefix the
// previous turn wrote at the cache price instead of the full one.
func cache(r *request) {
	ephemeral := &cacheControl{Type: "ephemeral"}
	if n := len(r.System); n > 0 {
		r.System[n-1].CacheControl = ephemeral
	}
	if n := len(r.Messages); n > 0 {
		last := &r.Messages[n-1]
		if k := len(last.Content); k > 0 && last.Role == "user" {
			last.Content[k-1].CacheControl = ephemeral
		}
	}
}
