package fleet

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

func TestJudge(t *testing.T) {
	now := time.Now()
	hint := func(s string) http.Header { return http.Header{"Retry-After": {s}} }
	for _, c := range []struct {
		name    string
		err     error
		cool    time.Duration
		outcome int
	}{
		{"success", nil, 0, outcomeOK},
		{"429 rate limit with a hint: the key cools, the provider is fine", &llm.APIError{Provider: "openai", StatusCode: 429, Header: hint("3"), Type: "rate_limit_exceeded", Message: "Rate limit reached"}, 3 * time.Second, outcomeNeutral},
		{"503 with a hint: cools and counts", &llm.APIError{StatusCode: 503, Header: hint("2"), Message: "overloaded"}, 2 * time.Second, outcomeFailed},
		{"500: counts, nothing to cool", &llm.APIError{StatusCode: 500, Message: "internal error"}, 0, outcomeFailed},
		{"connection refused counts", &llm.APIError{Err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}, 0, outcomeFailed},
		{"a usage limit is a mark, not a cooldown", &llm.APIError{StatusCode: 429, Header: hint("18000"), Code: "usage_limit_reached", Message: "Daily usage limit reached"}, 0, outcomeNeutral},
		{"400: the provider answered", &llm.APIError{StatusCode: 400, Message: "bad request: unknown field"}, 0, outcomeOK},
		{"an abort says nothing", fmt.Errorf("stream: %w", context.Canceled), 0, outcomeNeutral},
	} {
		t.Run(c.name, func(t *testing.T) {
			cool, _, outcome := judge(c.err, now)
			if cool != c.cool || outcome != c.outcome {
				t.Errorf("judge = cool %s, outcome %d; want %s, %d", cool, outcome, c.cool, c.outcome)
			}
		})
	}
}

func TestBucketKeepsTheLimit(t *testing.T) {
	for _, n := range []int{1, 2, 9, 10, 60, 1000} {
		burst, perMs := bucket(n, time.Minute)
		if got := burst + perMs*float64(time.Minute.Milliseconds()); n > 1 && got > float64(n)+1e-9 {
			t.Errorf("n=%d: burst %v + refill per window = %v, over the limit", n, burst, got)
		}
		if burst < 1 || perMs <= 0 {
			t.Errorf("n=%d: burst %v, refill %v: a request could never go", n, burst, perMs)
		}
	}
}

func TestKeyParts(t *testing.T) {
	parts := []string{"ollama", "qwen3:8b*[x]%"}
	f := &Fleet{prefix: prefix}
	if got := f.unparts(f.key("breaker", parts...), "breaker"); len(got) != 2 || got[0] != parts[0] || got[1] != parts[1] {
		t.Errorf("unparts = %q, want %q", got, parts)
	}
}
