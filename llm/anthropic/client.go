// Package anthropic is a thin streaming client for the Anthropic Messages
// API ("anthropic-messages"): one POST to /v1/messages with "stream": true,
// read as server-sent events and assembled through llm.Builder. It never
// retries: a failure comes back at once, classified by llm.Classify, and the
// session decides what to do.
package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/wire"
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

// Client streams from the Messages API. The zero value talks to
// DefaultBaseURL without a key (fine for a local proxy); set APIKey for the
// real API. A Client is safe for concurrent use.
type Client struct {
	// BaseURL is the API root, with or without a trailing "/v1". Empty
	// means the request's Model.BaseURL, or else DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key. It is redacted from every error.
	APIKey string
	// Provider names the provider in messages and errors; empty means
	// DefaultProvider.
	Provider string
	// Header is added to every request (anthropic-beta, a proxy's auth).
	Header http.Header
	// HTTP is the client to use; nil means one over http.DefaultTransport.
	// Its Timeout should be zero: it would cut long streams.
	HTTP *http.Client
	// Timeout bounds connecting and waiting for the response headers;
	// zero means wire.DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout ends a stream that sends no bytes for this long, with a
	// transient error; zero means wire.DefaultIdleTimeout.
	IdleTimeout time.Duration
}

var _ llm.Provider = (*Client)(nil)

func (c *Client) provider() string {
	if c.Provider != "" {
		return c.Provider
	}
	return DefaultProvider
}

// url returns the messages endpoint. Base URLs are written both ways in
// the wild ("https://api.anthropic.com" and ".../v1"), so both work.
func (c *Client) url(m *llm.Model) string {
	base := c.BaseURL
	if base == "" {
		base = m.BaseURL
	}
	if base == "" {
		base = DefaultBaseURL
	}
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") {
		return base + "/messages"
	}
	return base + "/v1/messages"
}

// secrets are the values redacted from error bodies: the key, and any
// credential a caller put in Header.
func (c *Client) secrets() []string {
	keys := []string{c.APIKey}
	for _, h := range []string{"Authorization", "X-Api-Key"} {
		for _, v := range c.Header.Values(h) {
			keys = append(keys, v, strings.TrimPrefix(v, "Bearer "))
		}
	}
	return keys
}

// Stream sends req and returns the streaming response. An HTTP error comes
// back as an *llm.APIError; a failure after the headers arrive comes out
// of the stream as its error event.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	body, err := newRequest(req)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, len(c.Header)+2)
	for k, v := range c.Header {
		h[k] = v
	}
	if c.APIKey != "" {
		h.Set("x-api-key", c.APIKey)
	}
	h.Set("anthropic-version", Version)
	provider, keys := c.provider(), c.secrets()
	cfg := wire.Config{HTTP: c.HTTP, Timeout: c.Timeout, IdleTimeout: c.IdleTimeout}
	resp, err := wire.Post(ctx, cfg, c.url(&req.Model), h, body, req.Attempt, func(status int, h http.Header, b []byte) error {
		return wire.APIError(provider, status, h, b, keys...)
	})
	if err != nil {
		if _, ok := llm.AsAPIError(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("anthropic: request: %w", err)
	}
	msg := llm.Message{
		Role:      llm.Assistant,
		API:       llm.APIAnthropicMessages,
		Provider:  provider,
		Model:     req.Model.ID,
		Timestamp: llm.Now(),
	}
	model := req.Model
	p := &parser{dec: sse.NewDecoder(resp.Body), model: &model, provider: provider, keys: keys}
	return llm.NewStream(msg, p.fill, resp.Close), nil
}
