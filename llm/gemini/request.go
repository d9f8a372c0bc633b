package gemini

import (
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// The request body of streamGenerateContent, only the fields rally sends.
// List is the conversation, encoded element by element (httpcall.Lister).
func (r *request) List() (string, iter.Seq[any]) { return "contents", httpcall.Items(r.Contents) }

type request struct {
	Contents          []content   `json:"-"` // List
	SystemInstruction *content    `json:"systemInstruction,omitempty"`
	Tools             []toolSet   `json:"tools,omitempty"`
	GenerationConfig  *generation `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is every part rally sends; only the fields of its kind are set.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type toolSet struct {
	FunctionDeclarations []declaration `json:"functionDeclarations"`
}

// declaration sends the tool's JSON Schema as parametersJsonSchema, which
// takes JSON Schema as it is, where "parameters" takes only an OpenAPI
// subset and refuses keywords such as additionalProperties.
type declaration struct {
	Name       string          `json:"name"`
	Desc       string          `json:"description,omitempty"`
	JSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type generation struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
	ThinkingBudget  int  `json:"thinkingBudget"`
}

// skipSignature is the value Google documents for a function call that has
// no thought signature (made by another model): Gemini 3 refuses such a
// call in the history without one.
const skipSignature = "skip_thought_signature_validator"

// syntheticPrefix starts the ids rally makes up for calls that Gemini sent
// without one; those ids are never sent back to the API.
const syntheticPrefix = "call_"

func newRequest(req *llm.Request) (*request, error) {
	if req.Model.ID == "" {
		return nil, errors.New("request has no model")
	}
	r := &request{Contents: contents(req.Messages, strings.HasPrefix(strings.TrimPrefix(req.Model.ID, "models/"), "gemini-3"))}
	if req.System != "" {
		r.SystemInstruction = &content{Parts: []part{{Text: req.System}}}
	}
	var decls []declaration
	for _, t := range req.Tools {
		d := declaration{Name: t.Name, Desc: t.Description}
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			d.JSONSchema = t.Parameters
		}
		decls = append(decls, d)
	}
	if len(decls) > 0 {
		r.Tools = []toolSet{{FunctionDeclarations: decls}}
	}
	g := &generation{MaxOutputTokens: req.MaxTokens}
	if g.MaxOutputTokens <= 0 {
		g.MaxOutputTokens = req.Model.MaxTokens
	}
	// "off" sends nothing: Gemini 2.5 Pro cannot turn thinking off, and a
	// zero budget would be refused; the model's default applies.
	if b := httpcall.ThinkingBudget(req.Thinking); b > 0 && req.Model.Reasoning {
		g.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: b}
	}
	if g.MaxOutputTokens > 0 || g.ThinkingConfig != nil {
		r.GenerationConfig = g
	}
	return r, nil
}

// contents converts the conversation, mended by httpcall.Repair: Gemini
// refuses a turn whose responses do not match its calls in number, and
// empty turns. Tool results become functionResponse parts of a user turn,
// consecutive ones together, as Gemini wants the answers to parallel calls
// in one turn.
func contents(in []llm.Message, gemini3 bool) []content {
	in = httpcall.Repair(in, func(m *llm.Message) bool {
		switch m.Role {
		case llm.User:
			return len(userParts(m.Content)) > 0
		case llm.Assistant:
			return len(modelParts(m, gemini3, nil)) > 0
		}
		return false
	}, nil)
	out := make([]content, 0, len(in))
	ids := map[string]bool{} // call ids Gemini issued, to send back
	for i := range in {
		m := &in[i]
		switch m.Role {
		case llm.User:
			out = append(out, content{Role: "user", Parts: userParts(m.Content)})
		case llm.Assistant:
			out = append(out, content{Role: "model", Parts: modelParts(m, gemini3, ids)})
		case llm.ToolResult:
			out = addResponses(out, resultParts(m, ids))
		}
	}
	return out
}

// addResponses appends function responses to the user turn of responses
// that ends out, or starts one.
func addResponses(out []content, ps []part) []content {
	if n := len(out); n > 0 && out[n-1].Role == "user" && out[n-1].Parts[0].FunctionResponse != nil {
		out[n-1].Parts = append(out[n-1].Parts, ps...)
		return out
	}
	return append(out, content{Role: "user", Parts: ps})
}

func userParts(cs []llm.Content) []part {
	var out []part
	for _, c := range cs {
		switch c.Type {
		case llm.TextType:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, part{Text: c.Text})
			}
		case llm.ImageType:
			out = append(out, part{InlineData: &blob{MimeType: c.MimeType, Data: c.Data}})
		}
	}
	return out
}

// modelParts converts an earlier answer. Thought signatures go back only
// to Gemini, which made them; thinking without one is dropped. The call ids
// sent back are added to ids, if it is not nil.
func modelParts(m *llm.Message, gemini3 bool, ids map[string]bool) []part {
	own := m.API == llm.APIGoogle
	var out []part
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, part{Text: c.Text})
			}
		case llm.ThinkingType:
			if own && c.ThinkingSignature != "" {
				out = append(out, part{Text: c.Thinking, Thought: true, ThoughtSignature: c.ThinkingSignature})
			}
		case llm.ToolCallType:
			p := part{FunctionCall: &functionCall{Name: c.Name, Args: httpcall.Object(c.Arguments)}}
			if own {
				p.ThoughtSignature = c.ThoughtSignature
				if c.ID != "" && !strings.HasPrefix(c.ID, syntheticPrefix) {
					p.FunctionCall.ID = c.ID
					if ids != nil {
						ids[c.ID] = true
					}
				}
			}
			if p.ThoughtSignature == "" && gemini3 {
				p.ThoughtSignature = skipSignature
			}
			out = append(out, p)
		}
	}
	return out
}

// resultParts converts a tool result: its text as the function's response
// ("output", or "error" when it failed, as Google's examples name them),
// then its images as parts of their own.
func resultParts(m *llm.Message, ids map[string]bool) []part {
	var text []string
	var images []part
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			text = append(text, c.Text)
		case llm.ImageType:
			images = append(images, part{InlineData: &blob{MimeType: c.MimeType, Data: c.Data}})
		}
	}
	key := "output"
	if m.IsError {
		key = "error"
	}
	fr := &functionResponse{Name: m.ToolName, Response: map[string]any{key: strings.Join(text, "\n")}}
	if ids[m.ToolCallID] {
		fr.ID = m.ToolCallID
	}
	return append([]part{{FunctionResponse: fr}}, images...)
}
