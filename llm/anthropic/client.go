// Package anthropic is a thin streaming client for the Anthropic Messages
// API ("anthropic-messages"): one POST to /v1/messages with "stream": true,
// read as server-sent events and assembled through llm.Builder. It never
// retries: a failure comes back at once, classified by llm.Classify, and the
// session decides what to do.
package anthropic

import (
	"context"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// Defaults for Client's zero values.
const (
	DefaultBaseURL  = "https://api.anthropic.com"
	DefaultProvider = "anthropic"
	// Version is the anthropic-version header: the API's stable version.
	Version = "2023-06-01"
	// DefaultMaxTokens caps the output when neither the request nor the
	// model says: the API refuses a request without max_tokens.
	DefaultMaxTokens = 4096
)

// API defines the Messages API for the registry.
var API = llm.APIDef{Name: llm.APIAnthropicMessages, Doc: "the Anthropic Messages API",
	DefaultBaseURL: DefaultBaseURL, New: func(o llm.ClientOptions) llm.Provider { return &Client{ClientOptions: o} }}

// Client streams from the Messages API. The zero value talks to
// DefaultBaseURL without a key (fine for a local proxy); set APIKey for the
// real API:
//
//	c := &anthropic.Client{ClientOptions: llm.ClientOptions{APIKey: key}}
//
// The options' BaseURL may be written with or without a trailing "/v1";
// empty means the request's Model.BaseURL, else DefaultBaseURL. Provider
// empty means the model's, else DefaultProvider. The key is sent as
// x-api-key. A Client is safe for concurrent use.
type Client struct {
	llm.ClientOptions
}

var _ llm.Provider = (*Client)(nil)

// endpoint returns the messages endpoint of base. Base URLs are written
// both ways in the wild ("https://api.anthropic.com" and ".../v1"), so
// both work.
func endpoint(base string) string {
	if strings.HasSuffix(base, "/v1") {
		return base + "/messages"
	}
	return base + "/v1/messages"
}

// call resolves the options for a request to model m.
func (c *Client) call(m *llm.Model) *httpcall.Call {
	call := httpcall.NewCall(&c.ClientOptions, m, llm.APIAnthropicMessages, DefaultBaseURL, DefaultProvider)
	call.URL = endpoint(call.Base)
	call.SetKey("x-api-key", c.APIKey)
	call.Header.Set("anthropic-version", Version)
	return call
}

// Stream sends req and returns the streaming response. An HTTP error comes
// back as an *llm.APIError; a failure after the headers arrive comes out
// of the stream as its error event.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	call := c.call(&req.Model)
	body, err := newRequest(req)
	if err != nil {
		return nil, call.Errorf("%w", err)
	}
	return call.Stream(ctx, req, body, func(dec *sse.Decoder, m *llm.Model) func(*llm.Builder) error {
		p := &parser{dec: dec, model: m, call: call}
		return p.fill
	})
}
