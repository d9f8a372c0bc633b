package llmtest_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// play sends one request; a client's idle timeout is played by abandoning
// the stream after stallAfter chunks, when that is not 0.
func play(t *testing.T, s *llmtest.Server, api llmtest.API, stallAfter int) (status int, r result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := post(ctx, t, s.URL, api, nil)
	if err != nil {
		return 0, r
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, r
	}
	sr := newSSE(resp.Body)
	var evs []event
	for {
		ev, err := sr.next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
		r = assemble(t, api, evs)
		if stallAfter > 0 && r.deltas == stallAfter && !r.terminal {
			cancel() // the client's idle timeout
			break
		}
	}
	return 200, assemble(t, api, evs)
}

func TestPresets(t *testing.T) {
	overloaded := func(a llmtest.API) string { return "http " + itoa(formats[a].overloaded) }
	cases := map[string]func(api llmtest.API) []string{
		"flaky":          func(llmtest.API) []string { return []string{"http 503", "ok"} },
		"overloaded":     func(a llmtest.API) []string { return []string{overloaded(a), overloaded(a), "ok"} },
		"rate-limited":   func(llmtest.API) []string { return []string{"http 429", "ok"} },
		"usage-limit":    func(llmtest.API) []string { return []string{"http 429", "ok"} },
		"usage-reset":    nil, // held for 10 s: TestUsageResetPreset drives its clock
		"overflow":       func(llmtest.API) []string { return []string{"http 400", "ok"} },
		"midstream-drop": func(llmtest.API) []string { return []string{"drop after 3", "ok"} },
		"stall":          func(llmtest.API) []string { return []string{"stall after 2", "ok"} },
		"resume":         func(llmtest.API) []string { return []string{"drop after 6", "ok"} },
	}
	if len(cases) != len(llmtest.Presets()) {
		t.Fatalf("presets %v, tested %d", llmtest.Presets(), len(cases))
	}
	for _, name := range llmtest.Presets() {
		if cases[name] == nil {
			continue
		}
		for _, api := range llmtest.APIs() {
			t.Run(name+"/"+string(api), func(t *testing.T) {
				script, err := llmtest.Preset(name)
				if err != nil {
					t.Fatal(err)
				}
				s, done := started(t, script...)
				want := append(cases[name](api), "ok") // past the end, the last step repeats
				var text string
				for i := range want {
					stallAfter := 0
					if name == "stall" && i == 0 {
						stallAfter = 2
					}
					status, r := play(t, s, api, stallAfter)
					if name == "rate-limited" && i == 0 && status != 429 {
						t.Errorf("status %d", status)
					}
					if i == len(want)-1 {
						text = r.text
					}
				}
				outcomes(t, done, len(want))
				var got []string
				for _, r := range s.Requests() {
					got = append(got, r.Outcome)
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("outcomes %q, want %q", got, want)
				}
				if text == "" {
					t.Error("the final request got no text")
				}
				if name == "rate-limited" {
					if h := s.Requests()[0]; h.Outcome != "http 429" {
						t.Errorf("first request %+v", h)
					}
				}
			})
		}
	}
	if _, err := llmtest.Preset("nope"); err == nil || !strings.Contains(err.Error(), "flaky") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestRateLimitedPresetSaysRetryAfter(t *testing.T) {
	script, _ := llmtest.Preset("rate-limited")
	for _, api := range llmtest.APIs() {
		s := llmtest.NewServer(t, script...)
		if resp := mustPost(t, s.URL, api); resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: retry-after %q", api, resp.Header.Get("Retry-After"))
		}
	}
}

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
