package retry

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// timeoutErr is a net.Error that timed out, as net/http's own are.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// describing is an error that describes itself, as *llm.APIError does.
type describing struct{ f Failure }

func (d describing) Error() string         { return "described" }
func (d describing) RetryFailure() Failure { return d.f }

func TestClassifyTransport(t *testing.T) {
	op := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://api.example.com/v1", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}}
	}
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"econnreset", op(syscall.ECONNRESET), Transient},
		{"econnrefused", op(syscall.ECONNREFUSED), Transient},
		{"epipe", op(syscall.EPIPE), Transient},
		{"unexpected eof", fmt.Errorf("openai: read stream: %w", io.ErrUnexpectedEOF), Transient},
		{"net timeout", &url.Error{Op: "Post", URL: "u", Err: timeoutErr{}}, Transient},
		{"deadline", fmt.Errorf("first byte: %w", context.DeadlineExceeded), Transient},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", Name: "api.x", IsTemporary: true}, Transient},
		{"dns not found", &net.DNSError{Err: "no such host", Name: "api.typo", IsNotFound: true}, Fatal},
		{"cert", &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, Fatal},
		{"cancelled", fmt.Errorf("stream: %w", context.Canceled), Fatal},
		{"opaque", errors.New("something odd"), Fatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FailureOf(tt.err)
			f.Body = "" // by type alone, not by text
			if v := Classify(f); v.Class != tt.want {
				t.Errorf("class %v (%s), want %v", v.Class, v.Reason, tt.want)
			}
		})
	}
}

func TestClassifyRules(t *testing.T) {
	tests := []struct {
		name string
		f    Failure
		want Class
	}{
		{"overflow wrapped in 500", Failure{Status: 500, Body: `{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum","type":"api_error"}}`}, ContextOverflow},
		{"413 without body", Failure{Status: 413}, ContextOverflow},
		{"request larger than TPM budget", Failure{Status: 429, Body: "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 45000."}, ContextOverflow},
		{"x-should-retry true wins over 400", Failure{Status: 400, Header: http.Header{"X-Should-Retry": {"true"}}}, Transient},
		{"x-should-retry false wins over 503", Failure{Status: 503, Header: http.Header{"X-Should-Retry": {"false"}}}, Fatal},
		{"overflow beats x-should-retry", Failure{Status: 400, Header: http.Header{"X-Should-Retry": {"true"}}, Body: "context_length_exceeded"}, ContextOverflow},
		{"quota sentence at openai is billing", Failure{Provider: "openai", Status: 429, Body: "You exceeded your current quota, please check your plan and billing details."}, Fatal},
		{"quota sentence at gemini is per-minute", Failure{Provider: "gemini", Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota. Please migrate to Gemini 2.0 Flash.","status":"RESOURCE_EXHAUSTED"}}`}, Transient},
		{"per-day quota is usage limit", Failure{Provider: "gemini", Status: 429, Body: `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`}, UsageLimit},
		{"usage limit in a 200 stream", Failure{MidStream: true, Body: `{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`}, UsageLimit},
		{"5000 tokens is not a 5xx", Failure{Body: "invalid max_tokens: must be at most 5000 tokens"}, Fatal},
		{"request id with 502 is not a 5xx", Failure{Body: "invalid model (request id: req_a502b)"}, Fatal},
		{"500 tokens is a count", Failure{Body: "the reply was cut at 500 tokens"}, Fatal},
		{"502 word", Failure{Body: "upstream returned 502 Bad Gateway"}, Transient},
		{"sdk status prefix", Failure{Body: "503 Service temporarily unavailable"}, Transient},
		{"sdk code prefix", Failure{Body: "Error code: 401 - {'error': {'message': 'Incorrect API key provided'}}"}, Fatal},
		{"described error", Failure{Err: describing{Failure{Status: 529}}}, Transient},
		{"429 with a day-long retry-after header is a usage limit", Failure{Status: 429, Header: http.Header{"Retry-After": {"86400"}}}, UsageLimit},
		{"429 with a short retry-after stays transient", Failure{Status: 429, Header: http.Header{"Retry-After": {"30"}}}, Transient},
		{"an absolute retry-after date does not count (clock-free)", Failure{Status: 429, Header: http.Header{"Retry-After": {"Wed, 21 Oct 2099 07:28:00 GMT"}}}, Transient},
		{"long wait on a non-limit error is not a usage limit", Failure{Status: 400, Body: "invalid model; retry after 86400 seconds"}, Fatal},
		{"count over a context limit", Failure{Status: 400, Body: "Input length (9000 tokens) exceeds the maximum allowed length (8192 tokens)."}, ContextOverflow},
		{"output token cap is a bad request, not overflow", Failure{Status: 400, Body: "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens"}, Fatal},
		{"per-minute input budget is a rate limit", Failure{Status: 429, Body: "This request would exceed the rate limit for your organization of 20,000 input tokens per minute."}, Transient},
		{"request alone over the per-minute budget", Failure{Status: 429, Body: "Rate limit reached on tokens per minute (TPM): Limit 7000, Used 0, Requested ~12903."}, ContextOverflow},
		{"request fits the per-minute budget", Failure{Status: 429, Body: "Rate limit reached on tokens per minute (TPM): Limit 7000, Used 6000, Requested 2,000."}, Transient},
		{"payment-required plan quota", Failure{Status: 402, Body: `{"error":{"message":"You have no quota","code":"quota_exceeded"}}`}, UsageLimit},
		{"402 without a quota code stays billing", Failure{Status: 402, Body: `{"error":{"message":"Payment required"}}`}, Fatal},
		{"empty", Failure{}, Fatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			if d, ok := f.Err.(describing); ok {
				f = FailureOf(d)
			}
			if v := Classify(f); v.Class != tt.want {
				t.Errorf("class %v (%s), want %v", v.Class, v.Reason, tt.want)
			}
		})
	}
}
