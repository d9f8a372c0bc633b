package gemini

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/rally-agent/rally/llm"
)

// The request body of streamGenerateContent, only the fields rally sends.
type request struct {
	Contents          []content   `json:"contents"`
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

// budgets are the thinking budgets of the reasoning levels.
var budgets = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// skipSignature is the value Google documents for a function call that has
// no thought signature (made by another model): Gemini 3 refuses such a
// call in the history without one.
const skipSignature = "skip_thought_signature_validator"

// syntheticPrefix starts the ids rally makes up for calls that Gemini sent
// without one; those ids are never sent back to the API.
const syntheticPrefix = "call_"

func newRequest(req *llm.Request) (*request, error) {
	if req.Model.ID == "" {
		return nil, errors.New("gemini: request has no model")
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
	if b := budgets[req.Thinking]; b > 0 && req.Model.Reasoning {
		g.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: b}
	}
	if g.MaxOutputTokens > 0 || g.ThinkingConfig != nil {
		r.GenerationConfig = g
	}
	return r, nil
}

// contents converts the conversation. Tool results become functionResponse
// parts of a user turn, consecutive ones together, as Gemini wants the
// answers to parallel calls in one turn. Gemini refuses a turn whose
// responses do not match its calls in number, so what cannot pair is
// mended here: answers that failed or were aborted are left out (their
// content may be cut short), a call left without a result gets one saying
// so, and a result without its call is dropped. Empty turns are dropped.
func contents(in []llm.Message, gemini3 bool) []content {
	out := make([]content, 0, len(in))
	ids := map[string]bool{} // call ids Gemini issued, to send back
	var open []llm.Content   // the last answer's calls still without a result
	settle := func() {
		for _, c := range open {
			out = addResponses(out, resultParts(&llm.Message{ToolCallID: c.ID, ToolName: c.Name, IsError: true,
				Content: []llm.Content{llm.Text(noResult)}}, ids))
		}
		open = open[:0]
	}
	for i := range in {
		m := &in[i]
		switch m.Role {
		case llm.User:
			if ps := userParts(m.Content); len(ps) > 0 {
				settle()
				out = append(out, content{Role: "user", Parts: ps})
			}
		case llm.Assistant:
			if m.StopReason == llm.Error || m.StopReason == llm.Aborted {
				continue
			}
			if ps := modelParts(m, gemini3, ids); len(ps) > 0 {
				settle()
				out = append(out, content{Role: "model", Parts: ps})
				open = append(open, m.ToolCalls()...)
			}
		case llm.ToolResult:
			k := slices.IndexFunc(open, func(c llm.Content) bool { return c.ID == m.ToolCallID })
			if k >= 0 {
				open = slices.Delete(open, k, k+1)
				out = addResponses(out, resultParts(m, ids))
			}
		}
	}
	settle()
	return out
}

// noResult is the result given to a tool call that has none in the
// conversation (the run was cut short before the tool ran).
const noResult = "No result: the tool call was interrupted before it ran."

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
// to Gemini, which made them; thinking without one is dropped.
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
			p := part{FunctionCall: &functionCall{Name: c.Name, Args: object(c.Arguments)}}
			if own {
				p.ThoughtSignature = c.ThoughtSignature
				if c.ID != "" && !strings.HasPrefix(c.ID, syntheticPrefix) {
					p.FunctionCall.ID = c.ID
					ids[c.ID] = true
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

// object returns args when it is a JSON object, else {}: functionCall.args
// must be an object.
func object(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return args
}
