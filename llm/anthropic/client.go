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

// url returns the messages endpoint. Base URLs are written both ways in
// the wild ("https://api.anthropic.com" and ".../v1"), so both work.
func (c *Client) url(m *llm.Model) string {
	base := strings.TrimRight(wire.FirstOf(c.BaseURL, m.BaseURL, DefaultBaseURL), "/")
	if strings.HasSuffix(base, "/v1") {
		return base + "/messages"
	}
	return base + "/v1/messages"
}

// Stream sends req and returns the streaming response. An HTTP error comes
// back as an *llm.APIError; a failure after the headers arrive comes out
// of the stream as its error event.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	body, err := newRequest(req)
	if err != nil {
		return nil, err
	}
	h := wire.KeyHeader(c.Header, "x-api-key", c.APIKey)
	h.Set("anthropic-version", Version)
	call := &wire.Call{
		Config:       wire.Config{HTTP: c.HTTP, Timeout: c.Timeout, IdleTimeout: c.IdleTimeout},
		URL:          c.url(&req.Model),
		Header:       h,
		API:          llm.APIAnthropicMessages,
		Provider:     wire.FirstOf(c.Provider, DefaultProvider),
		Keys:         wire.Secrets(c.APIKey, c.Header, "Authorization", "X-Api-Key"),
		RequestError: func(err error) error { return fmt.Errorf("anthropic: request: %w", err) },
	}
	return call.Stream(ctx, req, body, func(dec *sse.Decoder, m *llm.Model) func(*llm.Builder) error {
		p := &parser{dec: dec, model: m, provider: call.Provider, keys: call.Keys}
		return p.fill
	})
}
