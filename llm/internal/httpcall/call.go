package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/internal/sse"
	"github.com/rally-agent/rally/llm"
)

// Call is one streaming request, resolved from a client's options and the
// request's model: all that Stream needs besides the body, and the one
// wording of the client's errors. The clients differ in their endpoints,
// headers and parsers, and agree on the rest, which Call does.
type Call struct {
	Options llm.ClientOptions
	// Base is the API root without a trailing "/"; the client makes URL
	// of it.
	Base, URL string
	// Header is what the request sends: a copy of Options.Header, which
	// the client adds its key and version headers to.
	Header http.Header
	// API and Provider go into the assistant message; Provider also starts
	// every error.
	API, Provider string
	// Keys are the secrets to redact from anything the server sends back.
	Keys []string
}

// credentialHeaders are the request headers that carry a key in one API
// or another; a key a caller puts in one is as secret as APIKey.
var credentialHeaders = []string{"Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key"}

// NewCall resolves o for a request to model m of the given API: the base
// URL and the provider name are o's, else the model's, else the client's
// defaults.
func NewCall(o *llm.ClientOptions, m *llm.Model, api, defaultBase, defaultProvider string) *Call {
	c := &Call{
		Options:  *o,
		Base:     strings.TrimRight(FirstOf(o.BaseURL, m.BaseURL, defaultBase), "/"),
		Header:   make(http.Header, len(o.Header)+3),
		API:      api,
		Provider: FirstOf(o.Provider, m.Provider, defaultProvider),
	}
	for k, v := range o.Header {
		c.Header[k] = append([]string(nil), v...)
	}
	for _, name := range credentialHeaders {
		for _, v := range o.Header.Values(name) {
			c.Keys = append(c.Keys, v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
		}
	}
	if o.APIKey != "" {
		c.Keys = append(c.Keys, o.APIKey)
	}
	return c
}

// SetKey sends the API key in header name, when there is one.
func (c *Call) SetKey(name, value string) {
	if c.Options.APIKey != "" {
		c.Header.Set(name, value)
	}
}

// Parse makes the fill function (see llm.NewStream) that reads the events
// of dec into a message for model.
type Parse func(dec *sse.Decoder, model *llm.Model) func(*llm.Builder) error

// Stream sends body and, once the response headers are in, returns the
// stream of the assistant message that parse reads from the response. A
// non-2xx response is returned as an *llm.APIError, any other failure to
// get the headers as "<provider>: send request: …"; a failure after that
// is the stream's error event.
func (c *Call) Stream(ctx context.Context, req *llm.Request, body any, parse Parse) (*llm.Stream, error) {
	resp, err := c.post(ctx, req, body)
	if err != nil {
		return nil, err
	}
	// The parser prices usage with its own copy of the model, so a caller
	// that reuses req while the stream runs cannot change it.
	model := req.Model
	hook := new(llm.WaitHook)
	dec := sse.NewDecoder(&cappedBody{r: resp.Body, left: c.maxMessageBytes(), wait: hook})
	dec.MaxEvent = c.Options.MaxEventBytes
	return llm.NewStream(c.message(&model), c.capOutput(parse(dec, &model), outputCap(req)), resp.Close).Waits(hook), nil
}

// post sends the request and waits for the response headers, with the
// errors Stream documents.
func (c *Call) post(ctx context.Context, req *llm.Request, body any) (*Response, error) {
	// Keys are kept out of everything that comes back: the body, the
	// response headers (a proxy may echo them) and the URL a transport
	// error quotes.
	resp, err := Post(ctx, &c.Options, c.URL, c.Header, body, req.Attempt, c.APIErr)
	if err != nil {
		if _, ok := llm.AsAPIError(err); ok {
			return nil, err
		}
		// %w: the retry classifier looks at the Go type.
		return nil, c.Errorf("send request: %w", redact.URLError(err, c.Keys...))
	}
	return resp, nil
}

// message is the assistant message a stream of model starts from.
func (c *Call) message(model *llm.Model) llm.Message {
	return llm.Message{Role: llm.Assistant, API: c.API, Provider: c.Provider, Model: model.ID, Timestamp: llm.Now()}
}

func (c *Call) maxMessageBytes() int64 {
	if n := c.Options.MaxMessageBytes; n > 0 {
		return int64(n)
	}
	return llm.DefaultMaxMessageBytes
}

// outputCap is the most output tokens the request asked for: its own
// maxTokens, else the model's; 0 when neither says.
func outputCap(req *llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return req.Model.MaxTokens
}

// capOutput ends a stream whose output (text, thinking, tool arguments,
// in the one token estimate) runs past maxTokens times llm.OutputMargin:
// a real server stops at maxTokens, so one that goes on is broken or
// hostile, and its message would otherwise grow without end.
func (c *Call) capOutput(fill func(*llm.Builder) error, maxTokens int) func(*llm.Builder) error {
	if maxTokens <= 0 {
		return fill
	}
	limit := maxTokens * llm.OutputMargin
	return func(b *llm.Builder) error {
		err := fill(b)
		if n := llm.TextTokens(b.OutputBytes()); err == nil && !b.Done() && n > limit {
			return c.Errorf("%w: about %d output tokens streamed, %d times the model's maxTokens of %d; the server did not stop", llm.ErrMessageTooLarge, n, llm.OutputMargin, maxTokens)
		}
		return err
	}
}

// cappedBody fails the read that would take a response past its cap, so
// that no stream, however long, and no compressed body, however well it
// inflates, makes rally hold more than the cap. Every read of every
// stream's body goes through one, so it is also where the stream tells
// its consumer that it may wait (llm.Stream.OnWait).
type cappedBody struct {
	r    io.Reader
	left int64
	read int64
	wait *llm.WaitHook
}

func (b *cappedBody) Read(p []byte) (int, error) {
	b.wait.Wait()
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: more than %d bytes in one response (maxMessageBytes)", llm.ErrMessageTooLarge, b.read)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	b.read += int64(n)
	return n, err
}

// Errorf is the client's error: the provider's name, then the message. A
// %w verb wraps as in fmt.Errorf. Text from the server must go through
// Redact first.
func (c *Call) Errorf(format string, args ...any) error {
	return fmt.Errorf(c.Provider+": "+format, args...)
}

// ReadError wraps a failed read of the stream body (a reset, an idle
// timeout, an event over the cap).
func (c *Call) ReadError(err error) error { return c.Errorf("read stream: %w", err) }

// quoteLimit is how much of a malformed event an error quotes.
const quoteLimit = 80

// DecodeError reports an event (what: "chunk", "message_delta event") that
// is not the JSON it should be, quoting its start, redacted, so a user can
// see what the server sent.
func (c *Call) DecodeError(what string, err error, data []byte) error {
	q := data[:min(len(data), quoteLimit)]
	return c.Errorf("decode %s: %w: %q", what, err, c.Redact(string(q)))
}

// Malformed reports an event (what, as for DecodeError) of data that is
// not the JSON it should be, read from dec. When it is the last thing in
// the body, the body was cut mid-event: that is a truncated stream, which
// a retry fixes, not a broken one, and Malformed returns io.EOF for the
// parser to report as such.
func (c *Call) Malformed(dec *sse.Decoder, what string, err error, data []byte) error {
	quote := bytes.Clone(data[:min(len(data), quoteLimit)]) // data is dec's, until Next
	if _, next := dec.Next(); next == io.EOF {
		return io.EOF
	}
	return c.DecodeError(what, err, quote)
}

// StreamError is the error for an error event inside a 200 stream, with
// data as its body.
func (c *Call) StreamError(data []byte) *llm.APIError {
	e := APIError(c.Provider, 0, nil, data, c.Keys...)
	e.MidStream = true
	return e
}

// Redact removes the keys, and anything shaped like a key, from text the
// server sent.
func (c *Call) Redact(text string) string { return redact.Secrets(text, c.Keys...) }

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
