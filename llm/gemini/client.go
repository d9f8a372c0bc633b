// Package gemini is a thin streaming client for the Gemini API
// ("google-generative-ai"): one POST to
// models/{model}:streamGenerateContent?alt=sse, read as server-sent events
// and assembled through llm.Builder. It never retries: a failure comes back
// at once, classified by llm.Classify, and the session decides what to do.
package gemini

import (
	"context"
	"net/url"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/httpcall"
)

// Defaults for Client's zero values.
const (
	DefaultBaseURL  = "https://generativelanguage.googleapis.com/v1beta"
	DefaultProvider = "google"
)

// API defines the Gemini API for the registry.
var API = llm.APIDef{Name: llm.APIGoogle, Doc: "the Gemini API",
	DefaultBaseURL: DefaultBaseURL, New: func(o llm.ClientOptions) llm.Provider { return &Client{ClientOptions: o} }}

// Client streams from the Gemini API. The zero value talks to
// DefaultBaseURL without a key (fine for a local proxy); set APIKey for the
// real API:
//
//	c := &gemini.Client{ClientOptions: llm.ClientOptions{APIKey: key}}
//
// The options' BaseURL includes the API version ("…/v1beta"; a bare host
// gets "/v1beta"); empty means the request's Model.BaseURL, else
// DefaultBaseURL. Provider empty means the model's, else DefaultProvider.
// The key is sent as the x-goog-api-key header, never in the URL, which a
// transport error prints. A Client is safe for concurrent use.
type Client struct {
	llm.ClientOptions
}

var _ llm.Provider = (*Client)(nil)

// endpoint returns the streaming endpoint of model m under base. Model
// ids are accepted with or without the API's "models/" prefix, and a base
// URL without a path ("https://generativelanguage.googleapis.com") gets
// the API version it needs.
func endpoint(base string, m *llm.Model) string {
	if u, err := url.Parse(base); err == nil && u.Path == "" {
		base += "/v1beta"
	}
	id := strings.TrimPrefix(m.ID, "models/")
	return base + "/models/" + url.PathEscape(id) + ":streamGenerateContent?alt=sse"
}

// call resolves the options for a request to model m.
func (c *Client) call(m *llm.Model) *httpcall.Call {
	call := httpcall.NewCall(&c.ClientOptions, m, llm.APIGoogle, DefaultBaseURL, DefaultProvider)
	call.URL = endpoint(call.Base, m)
	call.SetKey("x-goog-api-key", c.APIKey)
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
		p := &parser{dec: dec, model: m, wire: call, nonce: nonce()}
		return p.fill
	})
}
