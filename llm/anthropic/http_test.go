package anthropic

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

func TestHTTPErrors(t *testing.T) {
	now := time.Now()
	reset := now.Add(42 * time.Second).UTC().Format(time.RFC3339)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		class   retry.Class
		typ     string
		hint    time.Duration // 0: none expected
	}{
		{"529 overloaded", api.Fail(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}`), retry.Transient, "overloaded_error", 0},
		{"429 retry-after", api.Fail(429, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}`, "retry-after", "7"),
			retry.Transient, "rate_limit_error", 7 * time.Second},
		{"429 ratelimit reset", api.Fail(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			"anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", reset), retry.Transient, "rate_limit_error", 42 * time.Second},
		{"500 api_error", api.Fail(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), retry.Transient, "api_error", 0},
		{"401 invalid key", api.Fail(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), retry.Fatal, "authentication_error", 0},
		{"400 bad request", api.Fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`), retry.Fatal, "invalid_request_error", 0},
		{"404 model", api.Fail(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`), retry.Fatal, "not_found_error", 0},
		{"400 prompt too long", api.Fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`), retry.ContextOverflow, "invalid_request_error", 0},
		{"413 request too large", api.Fail(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`), retry.ContextOverflow, "request_too_large", 0},
		{"400 credit balance", api.Fail(400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`), retry.Fatal, "invalid_request_error", 0},
		{"502 html", api.Fail(502, `<html><body>502 Bad Gateway</body></html>`), retry.Transient, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := providertest.NewServer(t, tt.handler)
			st, err := client(s).Stream(t.Context(), ask("hi"))
			if st != nil || err == nil {
				t.Fatalf("stream %v err %v", st, err)
			}
			e, ok := llm.AsAPIError(err)
			if !ok || e.Provider != "anthropic" || e.Type != tt.typ || e.MidStream || e.StatusCode == 0 {
				t.Fatalf("error %#v", err)
			}
			if !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Errorf("error %q", err)
			}
			if v := llm.Classify(err); v.Class != tt.class {
				t.Errorf("classified %v (%s), want %v", v.Class, v.Reason, tt.class)
			}
			if got := retry.Hint(retry.FailureOf(err), now); tt.hint != 0 && (got < tt.hint-2*time.Second || got > tt.hint) {
				t.Errorf("hint %v, want about %v", got, tt.hint)
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key")
		api.Fail(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: `+key+`"}}`, "x-echo", "k="+key)(w, r)
	}
	midStream := func(w http.ResponseWriter, r *http.Request) {
		api.Stream(msgStart(1, 0, 0, 1)+ev("error", `{"type":"error","error":{"type":"api_error","message":"key `+r.Header.Get("x-api-key")+` broke"}}`))(w, r)
	}
	for name, h := range map[string]http.HandlerFunc{"http": echo, "stream": midStream} {
		t.Run(name, func(t *testing.T) {
			c := client(providertest.NewServer(t, h))
			st, err := c.Stream(t.Context(), ask("hi"))
			if err == nil {
				_, err = llm.Collect(st)
			}
			e, ok := llm.AsAPIError(err)
			if !ok {
				t.Fatalf("error %v", err)
			}
			for what, s := range map[string]string{"Error()": err.Error(), "Body": e.Body, "Message": e.Message} {
				if strings.Contains(s, testKey) || strings.Contains(s, "test-secret") {
					t.Errorf("%s holds the key: %q", what, s)
				}
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	s := providertest.NewServer(t, api.Stream(textBody("ok")))
	c := client(s)
	c.Header = http.Header{"Anthropic-Beta": {"fine-grained-tool-streaming-2025-05-14"}}
	req := ask("hi")
	req.Attempt = 3
	if _, err, _ := providertest.Run(t, c, req); err != nil {
		t.Fatal(err)
	}
	got := s.Last()
	for k, want := range map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"X-Rally-Attempt":   "3",
		"Anthropic-Beta":    "fine-grained-tool-streaming-2025-05-14",
		"Content-Type":      "application/json",
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if got.Path != "/v1/messages" || strings.Contains(got.Path, testKey) {
		t.Errorf("path %q", got.Path)
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ base, model, want string }{
		{"", "", "https://api.anthropic.com/v1/messages"},
		{"", "https://proxy.example/anthropic", "https://proxy.example/anthropic/v1/messages"},
		{"http://127.0.0.1:8080/", "https://api.anthropic.com", "http://127.0.0.1:8080/v1/messages"},
		{"https://gw.example/v1", "", "https://gw.example/v1/messages"},
	}
	for _, tt := range tests {
		c := &Client{ClientOptions: llm.ClientOptions{BaseURL: tt.base}}
		if got := c.call(&llm.Model{BaseURL: tt.model}).URL; got != tt.want {
			t.Errorf("url(%q, %q) = %q, want %q", tt.base, tt.model, got, tt.want)
		}
	}
}

// The transport faults every client meets alike.
func TestResetBeforeHeaders(t *testing.T) { tested.ResetBeforeHeaders(t) }
func TestFirstByteTimeout(t *testing.T)   { tested.FirstByteTimeout(t) }
func TestDrop(t *testing.T)               { tested.Drop(t) }
func TestStall(t *testing.T)              { tested.Stall(t) }
func TestCancel(t *testing.T)             { tested.Cancel(t) }

// What the shared options mean, alike for every client.
func TestProviderName(t *testing.T)   { tested.ProviderName(t) }
func TestEventTooLarge(t *testing.T)  { tested.EventTooLarge(t) }
func TestPartialKeyEcho(t *testing.T) { tested.PartialKeyEcho(t) }
