package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUsageLimitResetLifts: a usage_limit step with resetIn answers every
// request with the limit, stating the time left, until its reset; then
// the script goes on.
func TestUsageLimitResetLifts(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 14, 59, 50, 0, time.UTC)
	srv := New(Step{Error: UsageLimit, ResetIn: 10 * time.Second}, Step{Text: "back again"})
	srv.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := httptest.NewServer(srv)
	defer ts.Close()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	call := func() (int, string, string) {
		t.Helper()
		res, err := http.Post(ts.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Retry-After"), string(b)
	}
	steps := []struct {
		after        time.Duration
		status       int
		retryAfter   string
		bodyContains string
	}{
		{0, 429, "10", "daily rate limit"},
		{4 * time.Second, 429, "6", "daily rate limit"},
		{5500 * time.Millisecond, 429, "1", "daily rate limit"}, // 0.5 s left rounds up
		{500 * time.Millisecond, 200, "", "back again"},
		{time.Hour, 200, "", "back again"},
	}
	for i, st := range steps {
		advance(st.after)
		status, ra, body := call()
		if status != st.status || ra != st.retryAfter || !strings.Contains(body, st.bodyContains) {
			t.Errorf("request %d: %d retry-after %q %.80s, want %d retry-after %q containing %q", i+1, status, ra, body, st.status, st.retryAfter, st.bodyContains)
		}
	}
}

// TestUsageLimitResetLastStep: a lifted limit that ends the script gives
// way to plain replies.
func TestUsageLimitResetLastStep(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	srv := New(Step{Error: UsageLimit, ResetIn: time.Second})
	srv.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for i, want := range []int{429, 200, 200} {
		res, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("request %d: status %d, want %d", i+1, res.StatusCode, want)
		}
		mu.Lock()
		now = now.Add(time.Second)
		mu.Unlock()
	}
}

func TestResetInScript(t *testing.T) {
	var s Step
	if err := json.Unmarshal([]byte(`{"error":"usage_limit","resetIn":"10s"}`), &s); err != nil || s.ResetIn != 10*time.Second {
		t.Fatalf("resetIn \"10s\" read as %v, %v", s.ResetIn, err)
	}
	if err := json.Unmarshal([]byte(`{"error":"usage_limit","resetIn":2500}`), &s); err != nil || s.ResetIn != 2500*time.Millisecond {
		t.Fatalf("resetIn 2500 read as %v, %v", s.ResetIn, err)
	}
	if err := json.Unmarshal([]byte(`{"resetIn":"soon"}`), &s); err == nil || !strings.Contains(err.Error(), "resetIn") {
		t.Errorf("resetIn \"soon\": err %v, want one naming resetIn", err)
	}
	b, _ := json.Marshal(Step{Error: UsageLimit, ResetIn: 10 * time.Second})
	if !strings.Contains(string(b), `"resetIn":"10s"`) {
		t.Errorf("marshalled %s, want resetIn \"10s\"", b)
	}
}

func TestResetInValidate(t *testing.T) {
	for _, st := range []Step{{Error: Overloaded, ResetIn: time.Second}, {Error: UsageLimit, ResetIn: -time.Second}, {Fault: ErrorEvent, Error: UsageLimit, ResetIn: time.Second}} {
		if err := st.Validate(); err == nil || !strings.Contains(err.Error(), "resetIn") {
			t.Errorf("Validate(%+v) = %v, want a resetIn error", st, err)
		}
	}
	if err := (&Step{Error: UsageLimit, ResetIn: time.Second}).Validate(); err != nil {
		t.Errorf("a usage limit with a reset: %v", err)
	}
}
