package gemini

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/internal/providertest"
	"github.com/rally-agent/rally/retry"
)

func timeNow() time.Time { return time.Now() }

// Error bodies as the API writes them.
const (
	quotaBody = `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10\nPlease retry in 33.512545s.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
            "quotaValue": "10"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "33s"
      }
    ]
  }
}`
	badKeyBody = `{
  "error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"}
      }
    ]
  }
}`
)

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		class   retry.Class
		code    string
		hint    time.Duration
	}{
		{"429 per-minute quota", api.Fail(429, quotaBody), retry.Transient, "RESOURCE_EXHAUSTED", 33 * time.Second},
		{"429 in an array", api.Fail(429, "["+quotaBody+"]"), retry.Transient, "RESOURCE_EXHAUSTED", 33 * time.Second},
		{"503 overloaded", api.Fail(503, `{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}`), retry.Transient, "UNAVAILABLE", 0},
		{"500 internal", api.Fail(500, `{"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}`), retry.Transient, "INTERNAL", 0},
		{"400 key invalid", api.Fail(400, badKeyBody), retry.Fatal, "INVALID_ARGUMENT", 0},
		{"403 permission", api.Fail(403, `{"error": {"code": 403, "message": "Method doesn't allow unregistered callers.", "status": "PERMISSION_DENIED"}}`), retry.Fatal, "PERMISSION_DENIED", 0},
		{"404 model", api.Fail(404, `{"error": {"code": 404, "message": "models/gemini-9 is not found for API version v1beta.", "status": "NOT_FOUND"}}`), retry.Fatal, "NOT_FOUND", 0},
		{"400 too many tokens", api.Fail(400, `{"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}`), retry.ContextOverflow, "INVALID_ARGUMENT", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := client(providertest.NewServer(t, tt.handler)).Stream(t.Context(), ask("hi"))
			if st != nil || err == nil {
				t.Fatalf("stream %v err %v", st, err)
			}
			e, ok := llm.AsAPIError(err)
			if !ok || e.Provider != "google" || e.Code != tt.code || e.MidStream || e.StatusCode == 0 || e.Message == "" {
				t.Fatalf("error %#v", err)
			}
			if v := llm.Classify(err); v.Class != tt.class {
				t.Errorf("classified %v (%s), want %v", v.Class, v.Reason, tt.class)
			}
			if h := retry.Hint(retry.FailureOf(err), time.Now()); tt.hint != 0 && h != tt.hint {
				t.Errorf("hint %v, want %v", h, tt.hint)
			}
		})
	}
}

func TestKeyNeverLeaks(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-goog-api-key")
		api.Fail(400, `{"error": {"code": 400, "message": "API key `+key+` not valid.", "status": "INVALID_ARGUMENT"}}`)(w, r)
	}
	midStream := func(w http.ResponseWriter, r *http.Request) {
		api.Stream(chunkOf(text("a"), "", nil)+data(`{"error": {"code": 500, "message": "key `+r.Header.Get("x-goog-api-key")+` broke", "status": "INTERNAL"}}`))(w, r)
	}
	finish := func(w http.ResponseWriter, r *http.Request) {
		api.Stream(data(`{"candidates":[{"finishReason":"OTHER","finishMessage":"saw `+r.Header.Get("x-goog-api-key")+`"}]}`))(w, r)
	}
	for name, h := range map[string]http.HandlerFunc{"http": echo, "stream": midStream, "finish": finish} {
		t.Run(name, func(t *testing.T) {
			s := providertest.NewServer(t, h)
			st, err := client(s).Stream(t.Context(), ask("hi"))
			if err == nil {
				_, err = llm.Collect(st)
			}
			if err == nil {
				t.Fatal("no error")
			}
			texts := map[string]string{"Error()": err.Error()}
			if e, ok := llm.AsAPIError(err); ok {
				texts["Body"], texts["Message"] = e.Body, e.Message
			}
			for what, s := range texts {
				if strings.Contains(s, testKey) || strings.Contains(s, "secret-key") {
					t.Errorf("%s holds the key: %q", what, s)
				}
			}
			if got := s.Last(); strings.Contains(got.Path+got.Query, testKey) || strings.Contains(got.Query, "key=") {
				t.Errorf("key in the URL: %s?%s", got.Path, got.Query)
			}
		})
	}
}

func TestRequestLine(t *testing.T) {
	s := providertest.NewServer(t, api.Stream(textBody("ok")))
	c := client(s)
	c.Header = http.Header{"X-Goog-User-Project": {"proj"}}
	req := ask("hi")
	req.Attempt = 2
	req.Model.ID = "models/gemini-2.5-flash"
	if _, err, _ := providertest.Run(t, c, req); err != nil {
		t.Fatal(err)
	}
	got := s.Last()
	if got.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || got.Query != "alt=sse" {
		t.Errorf("request line %s?%s", got.Path, got.Query)
	}
	for k, want := range map[string]string{"X-Goog-Api-Key": testKey, "X-Rally-Attempt": "2", "X-Goog-User-Project": "proj", "Content-Type": "application/json"} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
}

func TestURL(t *testing.T) {
	const tail = "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	tests := []struct{ base, model, want string }{
		{"", "", DefaultBaseURL + tail},
		{"", "https://proxy.example/gemini/v1beta/", "https://proxy.example/gemini/v1beta" + tail},
		{"https://generativelanguage.googleapis.com", "", "https://generativelanguage.googleapis.com/v1beta" + tail},
		{"http://127.0.0.1:9000/v1", "https://ignored", "http://127.0.0.1:9000/v1" + tail},
	}
	for _, tt := range tests {
		c := &Client{ClientOptions: llm.ClientOptions{BaseURL: tt.base}}
		if got := c.call(&llm.Model{ID: "models/gemini-2.5-pro", BaseURL: tt.model}).URL; got != tt.want {
			t.Errorf("url(%q, %q) = %q, want %q", tt.base, tt.model, got, tt.want)
		}
	}
}

func TestTransportErrorHidesKey(t *testing.T) {
	// Nothing listens there: the transport error prints the URL, which
	// must not hold the key.
	c := &Client{ClientOptions: llm.ClientOptions{BaseURL: "http://127.0.0.1:1/v1beta", APIKey: testKey, Timeout: 2 * time.Second}}
	_, err := c.Stream(t.Context(), ask("hi"))
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.HasPrefix(err.Error(), "google: send request: ") {
		t.Fatalf("error %v", err)
	}
	if v := llm.Classify(err); v.Class != retry.Transient {
		t.Errorf("connection refused classified %v", v.Class)
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
