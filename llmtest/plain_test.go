package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// plainPath and plainBody are pathFor and bodyFor without a stream: no
// "stream" field (the providers' default is false) or Gemini's
// :generateContent.
func plainPath(api llmtest.API) string {
	if p := formats[api].plainPath; p != "" {
		return p
	}
	return pathFor(api)
}

func plainBody(api llmtest.API, stream string) string {
	b := strings.Replace(bodyFor(api), `"stream":true`, stream, 1)
	return strings.Replace(b, `,"stream_options":{"include_usage":true}`, "", 1)
}

func postJSON(t *testing.T, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// at walks a decoded JSON value by object keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// plainAnswer is what a client reads from a whole response.
type plainAnswer struct {
	text, tool, args, stop string
	output                 float64
}

func TestWholeResponse(t *testing.T) {
	for _, api := range llmtest.APIs() {
		for _, stream := range []string{`"stream":false`, `"x":1`} {
			t.Run(string(api)+"/"+stream, func(t *testing.T) {
				s := llmtest.NewServer(t,
					llmtest.Step{Text: "Hello there, friend."},
					llmtest.Step{Text: "Looking.", ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a.go"}`}}},
				)
				for i, want := range []plainAnswer{
					{text: "Hello there, friend.", stop: formats[api].stop, output: 3},
					{text: "Looking.", tool: "read", args: `{"path":"a.go"}`, stop: formats[api].toolStop, output: 4},
				} {
					resp, err := postJSON(t, context.Background(), s.URL+plainPath(api), plainBody(api, stream))
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
						t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, resp.Header.Get("Content-Type"))
					}
					var v any
					if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
						t.Fatalf("request %d: not one JSON body: %v", i+1, err)
					}
					if got := formatOf(t, api).readPlain(v); got != want {
						t.Errorf("request %d: got %+v, want %+v", i+1, got, want)
					}
				}
				if out := s.Requests()[0].Outcome; out != "ok" {
					t.Errorf("outcome %q", out)
				}
			})
		}
	}
}

// Faults keep their meaning without a stream: an in-stream error becomes
// the HTTP error, a drop cuts the body, a stall sends no header.
func TestWholeResponseFaults(t *testing.T) {
	for _, api := range llmtest.APIs() {
		t.Run(string(api), func(t *testing.T) {
			s := llmtest.NewServer(t,
				llmtest.Step{Fault: llmtest.ErrorEvent, After: 2},
				llmtest.Step{Fault: llmtest.Drop, After: 1},
				llmtest.Step{Fault: llmtest.Stall, After: 1},
			)
			url, body := s.URL+plainPath(api), plainBody(api, `"stream":false`)
			resp, err := postJSON(t, context.Background(), url, body)
			if err != nil {
				t.Fatal(err)
			}
			want := formats[api].overloaded
			var e map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&e); resp.StatusCode != want || err != nil || e["error"] == nil {
				t.Errorf("error event: %d (want %d), %v, %v", resp.StatusCode, want, e, err)
			}
			resp.Body.Close()

			resp, err = postJSON(t, context.Background(), url, body)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("drop: read %v, want an unexpected EOF", err)
			}
			resp.Body.Close()

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				resp, err := postJSON(t, ctx, url, body)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			deadline := time.Now().Add(10 * time.Second)
			for len(s.Requests()) < 3 || s.Requests()[2].Outcome == "" {
				if time.Now().After(deadline) {
					t.Fatal("the stalled request never arrived")
				}
				time.Sleep(time.Millisecond)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("stall: the client got %v, want no response before it gave up", err)
			}
			var outs []string
			for _, r := range s.Requests() {
				outs = append(outs, r.Outcome)
			}
			if got := strings.Join(outs, ","); got != "http "+itoa(want)+",drop mid-body,stall before headers" {
				t.Errorf("outcomes %s", got)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestModels(t *testing.T) {
	tests := []struct {
		name, path string
		hdr        map[string]string
		want       string // the first model's id as the shape spells it
		get        []any
	}{
		{"openai", "/v1/models", map[string]string{"Authorization": "Bearer sk-test"}, "gpt-fake", []any{"data", 0, "id"}},
		{"openai object", "/v1/models", nil, "model", []any{"data", 0, "object"}},
		{"openai-compatible prefix", "/api/openai/v1/models", nil, "gpt-fake", []any{"data", 0, "id"}},
		{"gemini", "/v1beta/models", map[string]string{"x-goog-api-key": "AIza-test"}, "models/gpt-fake", []any{"models", 0, "name"}},
		{"gemini key parameter", "/v1/models?key=AIza-test", nil, "models/gpt-fake", []any{"models", 0, "name"}},
		{"anthropic", "/v1/models", map[string]string{"anthropic-version": "2023-06-01"}, "gpt-fake", []any{"data", 0, "id"}},
		{"anthropic type", "/v1/models", map[string]string{"x-api-key": "sk-ant-test"}, "model", []any{"data", 0, "type"}},
	}
	s := llmtest.New(llmtest.Step{Error: llmtest.Auth})
	s.Models = []string{"gpt-fake", "other"}
	s.Start(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.URL+tt.path, nil)
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var v any
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			if got := at(v, tt.get...); got != tt.want {
				t.Errorf("%v = %v, want %q", tt.get, got, tt.want)
			}
		})
	}
	// A model list takes no step: the first API request still gets the 401.
	if resp := mustPost(t, s.URL, llmtest.OpenAICompletions); resp.StatusCode != 401 {
		t.Errorf("first API request got %d", resp.StatusCode)
	}
}

func TestMalformedBody(t *testing.T) {
	for _, api := range llmtest.APIs() {
		f := formatOf(t, api)
		for _, body := range []string{`{"model": "m", "messages": [`, ``, `["not", "an", "object"]`} {
			t.Run(string(api)+"/"+body, func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Step{Text: "the first step"})
				resp, err := postJSON(t, context.Background(), s.URL+pathFor(api), body)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var v any
				if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 400 {
					t.Fatalf("%d %v", resp.StatusCode, err)
				}
				if got := at(v, f.malformed...); got != f.malformedType {
					t.Errorf("%v = %v, want %v", f.malformed, got, f.malformedType)
				}
				if r := s.Requests()[0]; r.Step != 0 || r.Outcome != "http 400 malformed body" {
					t.Errorf("recorded %+v", r)
				}
				evs, err := readAll(mustPost(t, s.URL, api).Body)
				if r := assemble(t, api, evs); err != nil || r.text != "the first step" {
					t.Errorf("the next request did not get the first step: %q %v", r.text, err)
				}
			})
		}
	}
}
