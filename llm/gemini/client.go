// Package gemini is a thin streaming client for the Gemini API
// ("google-generative-ai"): one POST to
// models/{model}:streamGenerateContent?alt=sse, read as server-sent events
// and assembled through llm.Builder. It never retries: a failure comes back
// at once, classified by llm.Classify, and the session decides what to do.
package gemini

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/wire"
)

// Defaults for Client's zero values.
const (
	DefaultBaseURL  = "https://generativelanguage.googleapis.com/v1beta"
	DefaultProvider = "google"
)

// Client streams from the Gemini API. The zero value talks to
// DefaultBaseURL without a key (fine for a local proxy); set APIKey for the
// real API. A Client is safe for concurrent use.
type Client struct {
	// BaseURL is the API root including its version ("…/v1beta"; a bare
	// host gets "/v1beta"). Empty means the request's Model.BaseURL, or
	// else DefaultBaseURL.
	BaseURL string
	// APIKey is sent as the x-goog-api-key header, never in the URL: a
	// transport error prints the URL. It is redacted from every error.
	APIKey string
	// Provider names the provider in messages and errors; empty means
	// DefaultProvider.
	Provider string
	// Header is added to every request (a proxy's auth, for instance).
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

// url returns the streaming endpoint of the model. Model ids are accepted
// with or without the API's "models/" prefix, and a base URL without a
// path ("https://generativelanguage.googleapis.com") gets the API version
// it needs.
func (c *Client) url(m *llm.Model) string {
	base := strings.TrimRight(wire.FirstOf(c.BaseURL, m.BaseURL, DefaultBaseURL), "/")
	if u, err := url.Parse(base); err == nil && u.Path == "" {
		base += "/v1beta"
	}
	id := strings.TrimPrefix(m.ID, "models/")
	return base + "/models/" + url.PathEscape(id) + ":streamGenerateContent?alt=sse"
}

// Stream sends req and returns the streaming response. An HTTP error comes
// back as an *llm.APIError; a failure after the headers arrive comes out
// of the stream as its error event.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	body, err := newRequest(req)
	if err != nil {
		return nil, err
	}
	call := &wire.Call{
		Config:       wire.Config{HTTP: c.HTTP, Timeout: c.Timeout, IdleTimeout: c.IdleTimeout},
		URL:          c.url(&req.Model),
		Header:       wire.KeyHeader(c.Header, "x-goog-api-key", c.APIKey),
		API:          llm.APIGoogle,
		Provider:     wire.FirstOf(c.Provider, DefaultProvider),
		Keys:         wire.Secrets(c.APIKey, c.Header, "Authorization", "X-Goog-Api-Key"),
		RequestError: func(err error) error { return fmt.Errorf("gemini: request: %w", err) },
	}
	return call.Stream(ctx, req, body, func(dec *sse.Decoder, m *llm.Model) func(*llm.Builder) error {
		p := &parser{dec: dec, model: m, provider: call.Provider, keys: call.Keys, nonce: nonce()}
		return p.fill
	})
}
