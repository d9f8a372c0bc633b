package openai

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// Completions streams from the Chat Completions API (POST
// {BaseURL}/chat/completions) of OpenAI or any OpenAI-compatible server.
// The zero value talks to OpenAI with no key; a Completions is safe for
// concurrent use once its fields are set.
//
// The finish_reason maps to the stop reason: stop → Stop, length → Length,
// tool_calls and function_call → ToolUse, content_filter → a fatal
// mid-stream error, OpenRouter's error → a transient one; unknown reasons
// read as Stop. A stream is complete at "data: [DONE]", but some servers
// omit it and the usage chunk may come after the finish_reason, so the
// message also finishes when the body ends (or breaks) after a
// finish_reason; only a body that ends with neither is truncated
// (llm.ErrTruncated, transient).
type Completions struct {
	// ClientOptions are the endpoint, key, headers, HTTP client,
	// timeouts and event cap. BaseURL is the API root, such as
	// "https://openrouter.ai/api/v1" or "http://localhost:11434/v1"; empty
	// means the model's BaseURL, else DefaultBaseURL. APIKey is sent as
	// "Authorization: Bearer …" unless Header has its own Authorization.
	// Provider empty means the model's Provider, else "openai".
	llm.ClientOptions
	// MaxTokensField names the output cap in the request:
	// "max_completion_tokens" (OpenAI's current name, the only one its
	// reasoning models take) or "max_tokens" (the only one many
	// compatible servers know: DeepSeek, Mistral, LM Studio, older vLLM
	// and llama.cpp). Empty picks max_completion_tokens for OpenAI's and
	// Azure's hosts and max_tokens for every other server.
	MaxTokensField string
}

var _ llm.Provider = (*Completions)(nil)

// Stream starts the call. The request asks for usage in the final chunk
// (stream_options.include_usage) and, for a reasoning model with
// req.Thinking set, passes it as reasoning_effort.
func (c *Completions) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	cn := resolve(&c.ClientOptions, &req.Model, llm.APIOpenAICompletions, "/chat/completions")
	if c.Resume {
		return c.continuable(ctx, cn, req)
	}
	return cn.Stream(ctx, req, c.request(req, cn.URL), func(dec *sse.Decoder, m *llm.Model) func(*llm.Builder) error {
		p := &chatParser{Call: cn, model: m, dec: dec}
		return p.fill
	})
}

type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"-"` // List
	Tools               []chatTool    `json:"tools,omitempty"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	ReasoningEffort     string        `json:"reasoning_effort,omitempty"`
	// ContinueFinalMessage and AddGenerationPrompt continue a dropped
	// answer (continue.go).
	ContinueFinalMessage bool  `json:"continue_final_message,omitempty"`
	AddGenerationPrompt  *bool `json:"add_generation_prompt,omitempty"`
}

// List is the conversation, encoded element by element (httpcall.Lister).
func (r *chatRequest) List() (string, iter.Seq[any]) { return "messages", httpcall.Items(r.Messages) }

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, a []chatPart, or absent (an assistant message
	// with only tool calls).
	Content    any            `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function chatFunc `json:"function"`
}

type chatFunc struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (c *Completions) request(req *llm.Request, endpoint string) *chatRequest {
	r := &chatRequest{
		Model:           req.Model.ID,
		Stream:          true,
		StreamOptions:   streamOptions{IncludeUsage: true},
		ReasoningEffort: effort(req),
	}
	if n := maxTokens(req); n > 0 {
		if c.completionTokens(endpoint) {
			r.MaxCompletionTokens = n
		} else {
			r.MaxTokens = n
		}
	}
	r.Messages = chatMessages(req.System, httpcall.Repair(req.Messages, nil, nil))
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, chatTool{Type: "function", Function: chatToolDef{Name: t.Name, Description: t.Description, Parameters: httpcall.Schema(t.Parameters)}})
	}
	return r
}

// completionTokens reports whether the output cap goes in
// max_completion_tokens.
func (c *Completions) completionTokens(endpoint string) bool {
	switch c.MaxTokensField {
	case "max_completion_tokens":
		return true
	case "max_tokens":
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "api.openai.com" || strings.HasSuffix(h, ".openai.azure.com")
}

// chatMessages converts the conversation, after the system prompt if any.
func chatMessages(system string, msgs []llm.Message) []chatMessage {
	out := make([]chatMessage, 0, len(msgs)+1)
	if system != "" {
		out = append(out, chatMessage{Role: "system", Content: system})
	}
	// Chat Completions takes only text in a tool message: a result's
	// images follow the run of tool messages as one user message.
	var pending []chatPart
	flush := func() {
		if len(pending) > 0 {
			parts := append([]chatPart{{Type: "text", Text: "Images from the tool results above:"}}, pending...)
			out = append(out, chatMessage{Role: "user", Content: parts})
			pending = nil
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.ToolResult {
			flush()
		}
		switch m.Role {
		case llm.User:
			if content := userContent(m); content != nil {
				out = append(out, chatMessage{Role: "user", Content: content})
			}
		case llm.Assistant:
			cm := chatMessage{Role: "assistant"}
			if text := m.TextOf(); text != "" {
				cm.Content = text
			}
			// Thinking is not sent back: the API has no field for it, and
			// servers that stream reasoning_content refuse it as input.
			for _, tc := range m.Content {
				if tc.Type != llm.ToolCallType {
					continue
				}
				args := string(httpcall.Object(tc.Arguments)) // a call whose arguments never parsed goes back as {}
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatFunc{Name: tc.Name, Arguments: args}})
			}
			if cm.Content != nil || len(cm.ToolCalls) > 0 {
				out = append(out, cm)
			}
		case llm.ToolResult:
			out = append(out, chatMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: resultText(m)})
			for _, img := range images(m) {
				pending = append(pending, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: imageURL(&img)}})
			}
		}
	}
	flush()
	return out
}

// userContent is a plain string for text alone, which every compatible
// server takes, and content parts only when there are images.
func userContent(m *llm.Message) any {
	imgs := images(m)
	if len(imgs) == 0 {
		if t := m.TextOf(); t != "" {
			return t
		}
		return nil
	}
	var parts []chatPart
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			parts = append(parts, chatPart{Type: "text", Text: c.Text})
		case llm.ImageType:
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: imageURL(&c)}})
		}
	}
	return parts
}
