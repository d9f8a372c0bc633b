package retry

import (
	"errors"
	"net/http"
)

// Failure describes one failed model call in plain terms, so that the same
// rules apply to a live HTTP failure, an error event inside a 200 stream, and
// an error message read back from a stored session.
type Failure struct {
	// Provider is the provider's name ("openai", "anthropic", "gemini", …),
	// or empty when unknown. Some messages mean different things at
	// different providers.
	Provider string
	// Status is the HTTP status, or 0 when no response arrived (a transport
	// error) or the error came inside a 200 stream.
	Status int
	// Header holds the response headers, if any (retry hints, x-should-retry).
	Header http.Header
	// Type and Code are the provider's structured error fields when the
	// caller already parsed them ("overloaded_error", "rate_limit_exceeded",
	// "RESOURCE_EXHAUSTED", …). Classify also finds them in Body.
	Type, Code string
	// Body is the raw response body or error message text.
	Body string
	// Err is the Go error behind the failure, if any; transport errors are
	// recognised by type.
	Err error
	// MidStream reports that the failure happened after the stream started.
	MidStream bool
}

// Describer is implemented by errors that can describe themselves as a
// Failure (rally's *llm.APIError does). FailureOf uses it.
type Describer interface {
	RetryFailure() Failure
}

// FailureOf describes err as a Failure: through the first Describer in its
// chain, or else as a Go error whose text is the message.
func FailureOf(err error) Failure {
	if err == nil {
		return Failure{}
	}
	var d Describer
	if errors.As(err, &d) {
		f := d.RetryFailure()
		if f.Err == nil {
			f.Err = err
		}
		return f
	}
	return Failure{Body: err.Error(), Err: err}
}

// Verdict is the classifier's answer about one failure.
type Verdict struct {
	Class Class
	// Reason says in a few words which rule decided, for logs and
	// `rally classify`.
	Reason string
	// Window and Requested are what a ContextOverflow states, 0 when it
	// does not: the model's context window ("maximum context length is
	// 8192 tokens", "n_ctx (4096)", "limit of 64000") and the size in
	// tokens of the request's input that did not fit.
	Window, Requested int
	// Signal is the kind of evidence that decided.
	Signal Signal
}
