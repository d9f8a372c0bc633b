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
// it (by wire.Repair, as every client does): an assistant message that
// failed or was aborted is left out with its tool results, a tool call left
// without a result gets a stand-in error result, and a result without its
// call is left out. Images in tool results, which neither API takes there,
// follow the results as a user message.
//
// Errors are prefixed with the client's provider name ("openai: …" by
// default). HTTP errors and in-stream error events are *llm.APIError with
// the API key and anything shaped like a key redacted; transport errors
// are wrapped with %w so the retry classifier sees their Go type.
package openai

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/wire"
)

// DefaultBaseURL is OpenAI's API root, used when neither the client nor the
// model names one.
const DefaultBaseURL = "https://api.openai.com/v1"

// conn is one request's wire.Call, with the methods the parsers use to
// word their errors.
type conn struct {
	wire.Call
}

// settings are the fields Completions and Responses share.
type settings struct {
	BaseURL, APIKey, Provider string
	Header                    http.Header
	HTTP                      *http.Client
	Timeout, IdleTimeout      time.Duration
}

// resolve fills the zero values: the base URL and provider name fall back
// to the model's, then to OpenAI's.
func (s settings) resolve(m *llm.Model, api, path string) *conn {
	base := wire.FirstOf(s.BaseURL, m.BaseURL, DefaultBaseURL)
	c := &conn{wire.Call{
		Config:   wire.Config{HTTP: s.HTTP, Timeout: s.Timeout, IdleTimeout: s.IdleTimeout},
		URL:      strings.TrimRight(base, "/") + path,
		Header:   make(http.Header, len(s.Header)+1),
		API:      api,
		Provider: wire.FirstOf(s.Provider, m.Provider, "openai"),
	}}
	for k, v := range s.Header {
		c.Header[k] = append([]string(nil), v...)
		// A key given as a header (Azure's api-key, a proxy's token) is as
		// secret as APIKey.
		switch strings.ToLower(k) {
		case "authorization", "api-key", "x-api-key":
			for _, x := range v {
				c.Keys = append(c.Keys, strings.TrimSpace(strings.TrimPrefix(x, "Bearer ")))
			}
		}
	}
	if s.APIKey != "" {
		c.Keys = append(c.Keys, s.APIKey)
		if c.Header.Get("Authorization") == "" {
			c.Header.Set("Authorization", "Bearer "+s.APIKey)
		}
	}
	// Beyond the body, the keys are redacted from the response headers (a
	// proxy may echo them) and from the URL a transport error quotes.
	c.APIError = func(status int, h http.Header, b []byte) error {
		return wire.APIError(c.Provider, status, wire.RedactHeader(h, c.Keys...), b, c.Keys...)
	}
	c.RequestError = func(err error) error {
		return fmt.Errorf("%s: send request: %w", c.Provider, wire.RedactURLError(err, c.Keys...))
	}
	return c
}

// streamError is the error for an error event inside a 200 stream.
func (c *conn) streamError(data []byte) *llm.APIError {
	return wire.StreamError(c.Provider, data, c.Keys...)
}

// readError wraps a failed read of the stream body.
func (c *conn) readError(err error) error {
	return fmt.Errorf("%s: read stream: %w", c.Provider, err)
}

// decodeError reports a chunk that is not the JSON it should be, quoting
// its start so a user can see what the server sent.
func (c *conn) decodeError(err error, data []byte) error {
	const limit = 80
	q := data
	if len(q) > limit {
		q = q[:limit]
	}
	return fmt.Errorf("%s: decode chunk: %w: %q", c.Provider, err, wire.Redact(string(q), c.Keys...))
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
