package openai

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// Responses streams from OpenAI's Responses API (POST {BaseURL}/responses).
// Requests are stateless (store: false): the whole conversation is sent
// each time, as input items. The zero value talks to OpenAI with no key; a
// Responses is safe for concurrent use once its fields are set.
type Responses struct {
	// ClientOptions are the endpoint, key, headers, HTTP client,
	// timeouts and event cap. BaseURL is the API root, such as
	// "https://openrouter.ai/api/v1" or "http://localhost:11434/v1"; empty
	// means the model's BaseURL, else DefaultBaseURL. APIKey is sent as
	// "Authorization: Bearer …" unless Header has its own Authorization.
	// Provider empty means the model's Provider, else "openai".
	llm.ClientOptions
}

var _ llm.Provider = (*Responses)(nil)

// Stream starts the call. For a reasoning model with req.Thinking set it
// asks for that effort with reasoning summaries (streamed as thinking), and
// for the encrypted reasoning, which is kept in the thinking block's
// signature and sent back on the next turn so the model keeps its chain of
// thought without server-side storage.
func (c *Responses) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	cn := resolve(&c.ClientOptions, &req.Model, llm.APIOpenAIResponses, "/responses")
	if c.Resume {
		return c.background(ctx, cn, req)
	}
	return cn.Stream(ctx, req, respBody(req), func(dec *sse.Decoder, m *llm.Model) func(*llm.Builder) error {
		p := &respParser{Call: cn, model: m, dec: dec}
		return p.fill
	})
}

// List is the conversation, encoded element by element (httpcall.Lister).
func (r *respRequest) List() (string, iter.Seq[any]) { return "input", httpcall.Items(r.Input) }

type respRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	Input           []any          `json:"-"` // List
	Tools           []respTool     `json:"tools,omitempty"`
	Stream          bool           `json:"stream"`
	Store           bool           `json:"store"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
	Include         []string       `json:"include,omitempty"`
	// Background is set with Store in resume mode (see background).
	Background bool `json:"background,omitempty"`
}

type respReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is sent as false: the Responses API defaults to strict
	// schemas, which reject ordinary ones (optional properties,
	// additionalProperties left open).
	Strict bool `json:"strict"`
}

type respMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or []respPart
}

type respPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type respCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

func respBody(req *llm.Request) *respRequest {
	r := &respRequest{
		Model:           req.Model.ID,
		Instructions:    req.System,
		Input:           respInput(httpcall.Repair(req.Messages, nil, nil), &req.Model),
		Stream:          true,
		MaxOutputTokens: maxTokens(req),
	}
	if e := effort(req); e != "" {
		r.Reasoning = &respReasoning{Effort: e, Summary: "auto"}
		r.Include = []string{"reasoning.encrypted_content"}
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: httpcall.Schema(t.Parameters)})
	}
	return r
}

func respInput(msgs []llm.Message, model *llm.Model) []any {
	out := []any{}
	var pending []respPart // tool-result images, sent after the outputs
	flush := func() {
		if len(pending) > 0 {
			parts := append([]respPart{{Type: "input_text", Text: "Images from the tool results above:"}}, pending...)
			out = append(out, respMessage{Role: "user", Content: parts})
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
			var parts []respPart
			for _, c := range m.Content {
				switch c.Type {
				case llm.TextType:
					parts = append(parts, respPart{Type: "input_text", Text: c.Text})
				case llm.ImageType:
					parts = append(parts, respPart{Type: "input_image", ImageURL: imageURL(&c)})
				}
			}
			if len(parts) > 0 {
				out = append(out, respMessage{Role: "user", Content: parts})
			}
		case llm.Assistant:
			out = append(out, assistantItems(m, model)...)
		case llm.ToolResult:
			out = append(out, respOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: resultText(m)})
			for _, img := range images(m) {
				pending = append(pending, respPart{Type: "input_image", ImageURL: imageURL(&img)})
			}
		}
	}
	flush()
	return out
}

// assistantItems are an assistant message's blocks as input items, in
// order. Reasoning goes back only to the model that wrote it, as the
// reasoning item it came in; other thinking is dropped.
func assistantItems(m *llm.Message, model *llm.Model) []any {
	var out []any
	own := m.API == llm.APIOpenAIResponses && m.Model == model.ID
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			if c.Text != "" {
				out = append(out, respMessage{Role: "assistant", Content: c.Text})
			}
		case llm.ThinkingType:
			if own && len(c.ThinkingSignature) > 0 && c.ThinkingSignature[0] == '{' && json.Valid([]byte(c.ThinkingSignature)) {
				out = append(out, json.RawMessage(c.ThinkingSignature))
			}
		case llm.ToolCallType:
			args := string(httpcall.Object(c.Arguments)) // a call whose arguments never parsed goes back as {}
			out = append(out, respCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args})
		}
	}
	return out
}
