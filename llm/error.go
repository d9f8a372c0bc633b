package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rally-agent/rally/retry"
)

// APIError is a provider's failure: an HTTP error response, or an error
// event inside a 200 stream (MidStream). Transport errors are wrapped in
// Err, not flattened to text. Body and Message never hold an API key: the
// clients redact echoes before building the error.
type APIError struct {
	Provider   string
	StatusCode int // 0 for an error inside a 200 stream or a transport failure
	Type       string
	Code       string
	Message    string
	Body       string
	Header     http.Header
	MidStream  bool
	Err        error
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, strings.ToLower(http.StatusText(e.StatusCode)))
	} else if e.MidStream {
		b.WriteString("stream error")
	} else {
		b.WriteString("request failed")
	}
	if e.Type != "" {
		b.WriteString(" (")
		b.WriteString(e.Type)
		b.WriteString(")")
	}
	switch {
	case e.Message != "" && !strings.EqualFold(e.Message, http.StatusText(e.StatusCode)):
		b.WriteString(": ")
		b.WriteString(e.Message)
	case e.Err != nil:
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Err }

// RetryFailure describes the error to the retry classifier.
func (e *APIError) RetryFailure() retry.Failure {
	body := e.Body
	if body == "" {
		body = e.Message
	}
	return retry.Failure{
		Provider:  e.Provider,
		Status:    e.StatusCode,
		Header:    e.Header,
		Type:      e.Type,
		Code:      e.Code,
		Body:      body,
		Err:       e.Err,
		MidStream: e.MidStream,
	}
}

// ErrIdleTimeout is wrapped by the error of a stream that sent no bytes for
// the provider's idle timeout. It is a timeout (net.Error-like), so the
// retry policy classifies it as transient.
var ErrIdleTimeout error = idleTimeout{}

type idleTimeout struct{}

func (idleTimeout) Error() string   { return "stream idle timeout" }
func (idleTimeout) Timeout() bool   { return true }
func (idleTimeout) Temporary() bool { return true }

// Classify is retry.Classify for any error a provider returned.
func Classify(err error) retry.Verdict { return retry.Classify(retry.FailureOf(err)) }

// AsAPIError returns the *APIError that err is or wraps, if any.
func AsAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}
