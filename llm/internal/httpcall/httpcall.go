// Package httpcall is the HTTP call plumbing the provider clients share,
// so that each keeps only what its API makes different: a POST bounded by
// a first-byte timeout, a body that fails when the stream goes idle, error
// bodies read into *llm.APIError, the resolution of a client's
// llm.ClientOptions and its one error wording (Call: every error starts
// with the provider's name, and anything from the server goes through
// internal/redact), the start of a stream, the decoding of its events'
// JSON (JSONDecoder), and the repair of the conversation every request
// sends (Repair). There is deliberately no http.Client.Timeout: it would
// kill long streams.
package httpcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rally-agent/rally/llm"
)

// defaultClient is the client of every call whose options name none: one
// for the process, so that calls share its pool of connections, as they
// did over http.DefaultTransport. It is never changed once built.
var defaultClient = sync.OnceValue(func() *http.Client { return &http.Client{Transport: llm.NewTransport()} })

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// timeouts are o's first-byte and idle timeouts, their zero values
// replaced by llm's defaults.
func timeouts(o *llm.ClientOptions) (first, idle time.Duration) {
	first, idle = o.Timeout, o.IdleTimeout
	if first <= 0 {
		first = llm.DefaultTimeout
	}
	if idle <= 0 {
		idle = llm.DefaultIdleTimeout
	}
	return first, idle
}

// ErrFirstByteTimeout is wrapped by the error of a request whose response
// headers did not arrive within ClientOptions.Timeout. It is a timeout, so the
// retry policy calls it transient.
var ErrFirstByteTimeout error = timeoutError("no response headers within the request timeout")

type timeoutError string

func (e timeoutError) Error() string   { return string(e) }
func (e timeoutError) Timeout() bool   { return true }
func (e timeoutError) Temporary() bool { return true }

// Response is a streaming response whose body is guarded by the idle
// timeout.
type Response struct {
	*http.Response
	cancel context.CancelCauseFunc
}

// Close releases the response and its context.
func (r *Response) Close() error {
	err := r.Body.Close()
	r.cancel(context.Canceled)
	return err
}

// Post sends body as JSON to url and waits for the response headers. A
// non-2xx response is read, closed and returned as an error made by
// apiErr. The request carries x-rally-attempt when attempt > 0.
func Post(ctx context.Context, o *llm.ClientOptions, url string, header http.Header, body any, attempt int, apiErr func(status int, h http.Header, body []byte) error) (*Response, error) {
	payload, err := encodeBody(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return send(ctx, o, http.MethodPost, url, header, payload, attempt, apiErr)
}

// Get is Post without a body: it reconnects to a stream the provider
// stored (a resumed response), under the same timeouts and errors.
func Get(ctx context.Context, o *llm.ClientOptions, url string, header http.Header, attempt int, apiErr func(status int, h http.Header, body []byte) error) (*Response, error) {
	return send(ctx, o, http.MethodGet, url, header, nil, attempt, apiErr)
}

// send makes the request; payload is nil for one without a body.
func send(ctx context.Context, o *llm.ClientOptions, method, url string, header http.Header, payload *requestBody, attempt int, apiErr func(status int, h http.Header, body []byte) error) (*Response, error) {
	release := func() {
		if payload != nil {
			payload.release()
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		cancel(nil)
		release()
		return nil, fmt.Errorf("build request: %w", err)
	}
	if payload != nil {
		// The body straight from the pooled buffer; GetBody lets the
		// transport send it again on a fresh connection, as it does for a
		// bytes.Reader.
		req.Body, _ = payload.reader() // not released yet: no error
		req.ContentLength = payload.len()
		req.GetBody = payload.reader
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "text/event-stream")
	// No transparent gzip: a small compressed body can inflate without
	// bound. An SSE stream gains little from compression anyway, and
	// what the server sends is capped as it arrives (MaxMessageBytes).
	req.Header.Set("Accept-Encoding", "identity")
	if attempt > 0 {
		req.Header.Set("x-rally-attempt", strconv.Itoa(attempt))
	}
	timeout, idle := timeouts(o)
	firstByte := time.AfterFunc(timeout, func() { cancel(ErrFirstByteTimeout) })
	client := o.HTTP
	if client == nil {
		client = defaultClient()
	}
	resp, err := client.Do(req)
	firstByte.Stop()
	if err != nil {
		release() // the transport closes its readers
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, ErrFirstByteTimeout) {
			return nil, ErrFirstByteTimeout
		}
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		cancel(nil)
		release()
		return nil, apiErr(resp.StatusCode, resp.Header, b)
	}
	// With the headers in, the transport never asks for the body again
	// (GetBody): let it go now rather than when the stream ends, so a
	// streaming session does not hold its request (the transport still
	// holds its reader until it has written it all).
	release()
	resp.Body = newIdleBody(ctx, resp.Body, idle, cancel)
	return &Response{Response: resp, cancel: cancel}, nil
}

// idleBody cancels the request when no Read returns data for a while, and
// turns the resulting error into llm.ErrIdleTimeout.
type idleBody struct {
	ctx   context.Context
	body  io.ReadCloser
	idle  time.Duration
	timer *time.Timer
}

func newIdleBody(ctx context.Context, body io.ReadCloser, idle time.Duration, cancel context.CancelCauseFunc) *idleBody {
	b := &idleBody{ctx: ctx, body: body, idle: idle}
	b.timer = time.AfterFunc(idle, func() { cancel(llm.ErrIdleTimeout) })
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); cause != nil {
			// The read failed because the context ended: report why (idle
			// timeout, or the caller's cancellation) rather than the
			// transport's generic "context canceled".
			return n, cause
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.body.Close()
}
