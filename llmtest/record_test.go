package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// lockedBuffer is a Log writer that the test can read while serving.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRecordingRedactsKeys(t *testing.T) {
	keys := map[llmtest.API]string{
		llmtest.OpenAICompletions:  "sk-proj-TOPSECRETopenai0001",
		llmtest.OpenAIResponses:    "sk-proj-TOPSECRETresp00002",
		llmtest.AnthropicMessages:  "sk-ant-api03-TOPSECRET0003",
		llmtest.GoogleGenerativeAI: "AIzaSyTOPSECRETgemini00004",
	}
	var logBuf lockedBuffer
	s := llmtest.New(llmtest.Step{Error: llmtest.Overloaded}, llmtest.Step{})
	s.Log = &logBuf
	done := make(chan llmtest.Request, 16)
	s.OnRequest = func(r llmtest.Request) { done <- r }
	s.Start(t)

	type sent struct {
		api    llmtest.API
		hdr    map[string]string
		query  bool
		where  string
		redact string
	}
	plan := []sent{
		{llmtest.OpenAICompletions, map[string]string{"Authorization": "Bearer " + keys[llmtest.OpenAICompletions], "x-rally-attempt": "1"}, false, "authorization", "sk-…0001"},
		{llmtest.OpenAIResponses, map[string]string{"Authorization": "Bearer " + keys[llmtest.OpenAIResponses], "x-rally-attempt": "2"}, false, "authorization", "sk-…0002"},
		{llmtest.AnthropicMessages, map[string]string{"x-api-key": keys[llmtest.AnthropicMessages], "x-rally-attempt": "3"}, false, "x-api-key", "sk-…0003"},
		{llmtest.GoogleGenerativeAI, map[string]string{"x-goog-api-key": keys[llmtest.GoogleGenerativeAI]}, false, "x-goog-api-key", "AIz…0004"},
		{llmtest.GoogleGenerativeAI, nil, true, "key", "AIz…0004"},
		{llmtest.AnthropicMessages, map[string]string{"x-api-key": "short"}, false, "x-api-key", "[redacted]"},
	}
	for _, p := range plan {
		if p.query {
			// ?key= on the URL, as Gemini's REST docs show it.
			url := s.URL + "/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=" + keys[p.api]
			resp, err := http.Post(url, "application/json", strings.NewReader(bodyFor(p.api)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			continue
		}
		resp, err := post(context.Background(), t, s.URL, p.api, p.hdr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = readAll(resp.Body)
		resp.Body.Close()
	}
	outcomes(t, done, len(plan))

	reqs := s.Requests()
	if len(reqs) != len(plan) {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	wantModel := map[llmtest.API]string{
		llmtest.OpenAICompletions:  "gpt-test",
		llmtest.OpenAIResponses:    "gpt-test",
		llmtest.AnthropicMessages:  "claude-test",
		llmtest.GoogleGenerativeAI: "gemini-test",
	}
	for i, r := range reqs {
		p := plan[i]
		if r.Seq != i+1 || r.API != p.api || r.Method != "POST" || r.Time.IsZero() {
			t.Errorf("request %d: %+v", i, r)
		}
		if r.AuthHeader != p.where || r.Credential != p.redact {
			t.Errorf("request %d: credential %q from %q, want %q from %q", i, r.Credential, r.AuthHeader, p.redact, p.where)
		}
		if r.Model != wantModel[p.api] || r.Messages != 2 {
			t.Errorf("request %d: model %q messages %d", i, r.Model, r.Messages)
		}
		if r.Attempt != p.hdr["x-rally-attempt"] {
			t.Errorf("request %d: attempt %q", i, r.Attempt)
		}
	}
	if reqs[0].Outcome != "http 503" || reqs[0].Step != 1 || reqs[1].Outcome != "ok" || reqs[1].Step != 2 || reqs[5].Step != 2 {
		t.Errorf("outcomes/steps: %+v %+v %+v", reqs[0], reqs[1], reqs[5])
	}

	var written bytes.Buffer
	if err := s.WriteLog(&written); err != nil {
		t.Fatal(err)
	}
	for _, log := range []string{written.String(), logBuf.String()} {
		if strings.Contains(log, "TOPSECRET") || strings.Contains(log, "short") {
			t.Fatalf("a key leaked into the log:\n%s", log)
		}
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if len(lines) != len(plan) {
			t.Fatalf("%d log lines:\n%s", len(lines), log)
		}
		var r llmtest.Request
		if err := json.Unmarshal([]byte(lines[2]), &r); err != nil || r.Credential != "sk-…0003" || r.Outcome != "ok" {
			t.Errorf("log line %q: %v", lines[2], err)
		}
	}
	if err := s.LogErr(); err != nil {
		t.Error(err)
	}
}
