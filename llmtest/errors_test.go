package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
)

// TestBuiltinErrors checks every built-in error body against its
// provider's shape and against rally's classifier, so that the fake fails
// the way the real provider does.
func TestBuiltinErrors(t *testing.T) {
	want := map[llmtest.ErrorKind]struct {
		class retry.Class
		hint  bool
	}{
		llmtest.Overloaded:  {retry.Transient, false},
		llmtest.RateLimited: {retry.Transient, true},
		llmtest.UsageLimit:  {retry.UsageLimit, true},
		llmtest.Overflow:    {retry.ContextOverflow, false},
		llmtest.Auth:        {retry.Fatal, false},
		llmtest.BadRequest:  {retry.Fatal, false},
		llmtest.NotFound:    {retry.Fatal, false},
		llmtest.ServerError: {retry.Transient, false},
	}
	for _, api := range llmtest.APIs() {
		for _, kind := range llmtest.ErrorKinds() {
			t.Run(string(api)+"/"+string(kind), func(t *testing.T) {
				now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
				s := llmtest.New(llmtest.Step{Fault: llmtest.HTTPError, Error: kind})
				s.Now = func() time.Time { return now }
				s.Start(t)
				resp := mustPost(t, s.URL, api)
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode < 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				checkErrorShape(t, api, resp.StatusCode, body)
				f := retry.Failure{Provider: formats[api].provider, Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
				v := retry.Classify(f)
				w := want[kind]
				if v.Class != w.class {
					t.Errorf("classified %v (%s), want %v\n%s", v.Class, v.Reason, w.class, body)
				}
				if h := retry.Hint(f, now); (h > 0) != w.hint {
					t.Errorf("hint %v, want one: %v", h, w.hint)
				} else if kind == llmtest.UsageLimit && h != 5*time.Minute {
					t.Errorf("usage limit hint %v, want 5m", h)
				}
			})
		}
	}
}

func checkErrorShape(t *testing.T, api llmtest.API, status int, body []byte) {
	t.Helper()
	if !formatOf(t, api).errorShape(decode(t, string(body)), status) {
		t.Errorf("%s error shape: %s", api, body)
	}
}

func TestHTTPErrorOverrides(t *testing.T) {
	s := llmtest.NewServer(t,
		llmtest.Step{Status: 502},
		llmtest.Step{Error: llmtest.Overloaded, Status: 503, Header: map[string]string{"x-should-retry": "true"}},
		llmtest.Step{Status: 418, Body: "I'm a teapot"},
	)
	resp := mustPost(t, s.URL, llmtest.AnthropicMessages)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 502 || !strings.Contains(string(b), `"api_error"`) {
		t.Errorf("status only: %d %s", resp.StatusCode, b)
	}
	resp = mustPost(t, s.URL, llmtest.AnthropicMessages)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("x-should-retry") != "true" || !strings.Contains(string(b), "overloaded_error") {
		t.Errorf("kind with status: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	resp = mustPost(t, s.URL, llmtest.OpenAICompletions)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 418 || string(b) != "I'm a teapot" {
		t.Errorf("body override: %d %q", resp.StatusCode, b)
	}
	got := []string{}
	for _, r := range s.Requests() {
		got = append(got, r.Outcome)
	}
	if strings.Join(got, ",") != "http 502,http 503,http 418" {
		t.Errorf("outcomes %q", got)
	}
}

// The auth error echoes the key the way OpenAI does, but redacted.
func TestAuthErrorNeverEchoesKey(t *testing.T) {
	const key = "sk-proj-SECRETSECRETSECRET9876"
	s := llmtest.NewServer(t, llmtest.Step{Error: llmtest.Auth})
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error struct{ Message string } }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Error.Message, "SECRET") || !strings.Contains(e.Error.Message, "sk-…9876") {
		t.Errorf("message %q", e.Error.Message)
	}
}
