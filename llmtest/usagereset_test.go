package llmtest_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestUsageResetPreset: the usage-reset preset holds its limit for
// UsageResetDemo on every API, then answers.
func TestUsageResetPreset(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			script, err := llmtest.Preset("usage-reset")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
			srv := llmtest.New(script...)
			srv.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			ts := httptest.NewServer(srv)
			defer ts.Close()
			for i, step := range []struct {
				after  time.Duration
				status int
			}{{0, 429}, {llmtest.UsageResetDemo - time.Second, 429}, {time.Second, 200}} {
				mu.Lock()
				now = now.Add(step.after)
				mu.Unlock()
				res, err := postJSON(t, context.Background(), ts.URL+plainPath(api), plainBody(api, `"stream":false`))
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != step.status {
					t.Errorf("request %d: status %d, want %d", i+1, res.StatusCode, step.status)
				}
			}
		})
	}
}
