// Package openai streams model calls from OpenAI's two HTTP APIs: Chat
// Completions (Completions, API "openai-completions"), which every
// OpenAI-compatible server also speaks (OpenRouter, Groq, xAI, DeepSeek,
// vLLM, llama.cpp, Ollama's /v1, LM Studio), and the Responses API
// (Responses, API "openai-responses").
//
// Both clients are thin: one POST over net/http, the server-sent events
// parsed as they arrive into an *llm.Stream, and no retrying of any kind,
// since the session owns all retrying. A failure before the stream starts
// (an HTTP error, a refused connection, no headers within Timeout) is
// returned by Stream as an error; a failure after it started (a dropped
// connection, an idle stream, an error event inside the 200 response) is
// the stream's error event.
//
// Both send the whole conversation each time, repaired so the APIs accept
// it (by httpcall.Repair, as every client does): an assistant message that
// failed or was aborted is left out with its tool results, a tool call left
// without a result gets a stand-in error result, and a result without its
// call is left out. Images in tool results, which neither API takes there,
// follow the results as a user message.
//
// Both take llm.ClientOptions (embedded), like every client:
//
//	c := &openai.Completions{ClientOptions: llm.ClientOptions{
//		BaseURL: "https://openrouter.ai/api/v1", APIKey: key, Provider: "openrouter",
//	}}
//
// Errors are prefixed with the client's provider name ("openai: …" by
// default). HTTP errors and in-stream error events are *llm.APIError with
// the API key and anything shaped like a key redacted; transport errors
// are wrapped with %w so the retry classifier sees their Go type.
package openai

import (
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// DefaultBaseURL is OpenAI's API root, used when neither the client nor the
// model names one.
const DefaultBaseURL = "https://api.openai.com/v1"

// CompletionsAPI and ResponsesAPI define the two APIs for the registry.
var (
	CompletionsAPI = llm.APIDef{Name: llm.APIOpenAICompletions, Doc: "Chat Completions and OpenAI-compatible servers",
		DefaultBaseURL: DefaultBaseURL, New: func(o llm.ClientOptions) llm.Provider { return &Completions{ClientOptions: o} }}
	ResponsesAPI = llm.APIDef{Name: llm.APIOpenAIResponses, Doc: "the OpenAI Responses API",
		DefaultBaseURL: DefaultBaseURL, New: func(o llm.ClientOptions) llm.Provider { return &Responses{ClientOptions: o} }}
)

// resolve makes the call of one request: the base URL and provider name
// fall back to the model's, then to OpenAI's. The key goes in
// Authorization unless the caller put its own there.
func resolve(o *llm.ClientOptions, m *llm.Model, api, path string) *httpcall.Call {
	c := httpcall.NewCall(o, m, api, DefaultBaseURL, "openai")
	c.URL = c.Base + path
	if c.Header.Get("Authorization") == "" {
		c.SetKey("Authorization", "Bearer "+o.APIKey)
	}
	return c
}

// maxTokens is the output cap to send: the request's, else the model's,
// else none (0).
func maxTokens(req *llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return req.Model.MaxTokens
}

// effort is the reasoning effort to ask for, or "" to leave the server's
// default: only reasoning models get one, since OpenAI rejects the field
// for the others.
func effort(req *llm.Request) string {
	if !req.Model.Reasoning || req.Thinking == "" || req.Thinking == "off" {
		return ""
	}
	return req.Thinking
}

// usage turns OpenAI's counts, whose prompt total includes the cached
// tokens, into rally's, whose Input does not, and prices them.
func usage(m *llm.Model, prompt, cached, output, total int) llm.Usage {
	cached = min(max(cached, 0), max(prompt, 0))
	u := llm.Usage{Input: prompt - cached, Output: output, CacheRead: cached, TotalTokens: total}
	if u.TotalTokens <= 0 {
		u.TotalTokens = prompt + output
	}
	m.Price(&u)
	return u
}

// imageURL is an image block as a data URL.
func imageURL(c *llm.Content) string {
	return "data:" + c.MimeType + ";base64," + c.Data
}

// resultText is the text of a tool result's content blocks.
func resultText(m *llm.Message) string {
	if len(m.Content) == 1 && m.Content[0].Type == llm.TextType {
		return m.Content[0].Text // the usual result: no copy
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == llm.TextType {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// images returns a message's image blocks.
func images(m *llm.Message) []llm.Content {
	var out []llm.Content
	for _, c := range m.Content {
		if c.Type == llm.ImageType {
			out = append(out, c)
		}
	}
	return out
}
