package wire

import (
	"context"
	"net/http"
	"strings"

	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
)

// Call is one streaming request, resolved from a client's settings and the
// request's model: all that Stream needs besides the body. The clients
// differ in their endpoints, headers and error wording, and agree on the
// rest, which Stream does.
type Call struct {
	Config Config
	URL    string
	Header http.Header
	// API and Provider go into the assistant message; Provider also names
	// the provider in its errors.
	API, Provider string
	// Keys are the secrets to redact from anything the server sends back.
	Keys []string
	// APIError makes the error of a non-2xx response. Nil means
	// APIError(Provider, status, h, body, Keys...).
	APIError func(status int, h http.Header, body []byte) error
	// RequestError wraps a failure before the response headers arrived (a
	// refused connection, a first-byte timeout) in the client's words. It
	// must wrap with %w: the retry classifier looks at the Go type.
	RequestError func(error) error
}

// Parse makes the fill function (see llm.NewStream) that reads the events
// of dec into a message for model.
type Parse func(dec *sse.Decoder, model *llm.Model) func(*llm.Builder) error

// Stream sends body and, once the response headers are in, returns the
// stream of the assistant message that parse reads from the response. A
// non-2xx response is returned as APIError's error, any other failure to
// get the headers as RequestError's; a failure after that is the stream's
// error event.
func (c *Call) Stream(ctx context.Context, req *llm.Request, body any, parse Parse) (*llm.Stream, error) {
	// Keys are kept out of everything that comes back: the body, the
	// response headers (a proxy may echo them) and the URL a transport
	// error quotes.
	apiErr := c.APIError
	if apiErr == nil {
		apiErr = func(status int, h http.Header, b []byte) error {
			return APIError(c.Provider, status, RedactHeader(h, c.Keys...), b, c.Keys...)
		}
	}
	resp, err := Post(ctx, c.Config, c.URL, c.Header, body, req.Attempt, apiErr)
	if err != nil {
		if _, ok := llm.AsAPIError(err); ok {
			return nil, err
		}
		return nil, c.RequestError(RedactURLError(err, c.Keys...))
	}
	// The parser prices usage with its own copy of the model, so a caller
	// that reuses req while the stream runs cannot change it.
	model := req.Model
	msg := llm.Message{Role: llm.Assistant, API: c.API, Provider: c.Provider, Model: model.ID, Timestamp: llm.Now()}
	return llm.NewStream(msg, parse(sse.NewDecoder(resp.Body), &model), resp.Close), nil
}

// StreamError is the error for an error event inside a 200 stream, with
// data as its body.
func StreamError(provider string, data []byte, keys ...string) *llm.APIError {
	e := APIError(provider, 0, nil, data, keys...)
	e.MidStream = true
	return e
}

// FirstOf returns the first of s that is not empty: a client's setting,
// then the model's, then the default.
func FirstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// KeyHeader returns a copy of h, which the request may add to, with key
// set as the header name when there is a key.
func KeyHeader(h http.Header, name, key string) http.Header {
	out := make(http.Header, len(h)+2)
	for k, v := range h {
		out[k] = v
	}
	if key != "" {
		out.Set(name, key)
	}
	return out
}

// Secrets are the values to redact from error bodies: the key, and any
// credential a caller put in h under one of names, with or without its
// "Bearer " prefix.
func Secrets(key string, h http.Header, names ...string) []string {
	keys := []string{key}
	for _, name := range names {
		for _, v := range h.Values(name) {
			keys = append(keys, v, strings.TrimPrefix(v, "Bearer "))
		}
	}
	return keys
}
