package llm

import (
	"errors"
	"net/http"
	"time"

	"github.com/rally-agent/rally/internal/sse"
)

// Defaults for ClientOptions' zero values. The settings package uses the
// same constants for its defaults, so a client built in Go and one built
// from settings.json behave alike.
const (
	// DefaultTimeout bounds connecting and waiting for the first byte of
	// a response: long enough for a cold model to start streaming, short
	// enough that a dead host is noticed before the user gives up.
	DefaultTimeout = 30 * time.Second
	// DefaultIdleTimeout ends a stream that sent nothing for this long.
	// Reasoning models can think silently for tens of seconds, so it is
	// twice the first-byte timeout.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxEventBytes caps one server-sent event (64 MiB): far above
	// any real event, tool-call arguments included, and small enough that
	// a runaway stream cannot take the machine's memory.
	DefaultMaxEventBytes = sse.DefaultMaxEvent
	// DefaultMaxMessageBytes caps the whole response of one streamed
	// message (128 MiB): four times what the longest real answer takes
	// on the wire (128k output tokens at about 250 bytes an event), and a
	// bound on what a server streaming without end, or a small gzip bomb,
	// can make rally hold.
	DefaultMaxMessageBytes = 128 << 20
	// OutputMargin is how far past the model's maxTokens a stream may go
	// (in the one token estimate, TextTokens) before rally ends it: the
	// estimate is rough, and a real server stops at maxTokens anyway.
	OutputMargin = 4
)

// ErrMessageTooLarge is wrapped by the error of a stream that went past
// ClientOptions.MaxMessageBytes or past the model's maxTokens (times
// OutputMargin). A server that does not stop will not stop on a retry
// either, so the retry policy calls it fatal.
var ErrMessageTooLarge = errors.New("message too large")

// ErrEventTooLarge is wrapped by the error of a stream that sent one event
// bigger than ClientOptions.MaxEventBytes. Waiting does not shrink it, so
// the retry policy calls it fatal.
var ErrEventTooLarge = sse.ErrEventTooLarge

// ClientOptions are the settings every provider client takes (the
// openai.Completions and openai.Responses, anthropic.Client and
// gemini.Client clients embed them), so a provider entry of the settings
// maps onto any of them alike:
//
//	p := &anthropic.Client{ClientOptions: llm.ClientOptions{APIKey: key}}
//
// The zero value talks to the client's default endpoint without a key,
// with the defaults above.
type ClientOptions struct {
	// BaseURL is the API root. Empty means the request's Model.BaseURL,
	// else the client's default (each client documents its own).
	BaseURL string
	// APIKey is sent in the header the API expects. Empty sends none, for
	// local servers and proxies; a key may also come in Header. It is
	// redacted from every error, whole or partly echoed.
	APIKey string
	// Provider names the provider in messages and starts every error the
	// client returns ("openrouter: 429 too many requests …"). Empty means
	// the request's Model.Provider, else the client's default.
	Provider string
	// Header is added to every request (OpenRouter's HTTP-Referer,
	// Azure's api-key, anthropic-beta, a proxy's token). A credential in
	// Authorization, Api-Key, X-Api-Key or X-Goog-Api-Key is redacted like
	// APIKey.
	Header http.Header
	// HTTP is the client to use; nil means one with no timeout over a
	// transport shared by the process, built by NewTransport. A Timeout
	// on it would kill long streams: use Timeout and IdleTimeout instead.
	HTTP *http.Client
	// Timeout bounds connecting and waiting for the response headers.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout ends a stream that sends no bytes for this long with a
	// transient error (ErrIdleTimeout). Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxEventBytes caps one server-sent event; a bigger one fails the
	// stream with ErrEventTooLarge and is never held in memory whole.
	// Zero means DefaultMaxEventBytes.
	MaxEventBytes int
	// MaxMessageBytes caps the bytes of one streamed response, after any
	// decompression; past it the stream fails with ErrMessageTooLarge.
	// Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Resume asks the client to stream in a way that a dropped stream can
	// be continued rather than restarted (see Drop): the Responses API in
	// background mode (the response is stored by the provider for about
	// ten minutes, which zero data retention forbids, and the first token
	// comes later), or Chat Completions with continue_final_message (vLLM,
	// SGLang). Off by default, since it costs something; clients of APIs
	// with no way to resume ignore it.
	Resume bool
}
