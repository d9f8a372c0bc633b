package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
)

// TestSeam cuts from a continuation's start what repeats the end of the
// partial answer, and nothing else.
func TestSeam(t *testing.T) {
	partial := "The quick brown fox jumps over the lazy"
	for _, tc := range []struct {
		name   string
		deltas []string
		want   string
	}{
		{"five words again", []string{" fox", " jumps over", " the lazy", " dog."}, " dog."},
		{"no repeat", []string{" dog", " barks."}, " dog barks."},
		{"a short overlap is text", []string{" lazy", " cat."}, " lazy cat."},
		{"the whole partial again", []string{"The quick brown fox jumps over the lazy", " dog."}, " dog."},
		{"mid-word is not a repeat", []string{"azy", " one."}, "azy one."},
		{"ends while held back", []string{" over the lazy"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeam(partial)
			var got string
			for _, d := range tc.deltas {
				got += s.take(d)
			}
			got += s.flush()
			if got != tc.want {
				t.Errorf("shown %q, want %q", got, tc.want)
			}
		})
	}
}

// TestContinuationRequest: after a drop, the continuation is the same
// conversation with the partial answer last, continue_final_message true
// and add_generation_prompt false, as vLLM and SGLang expect.
func TestContinuationRequest(t *testing.T) {
	text := "one two three four five six seven eight"
	fake := llmtest.New(llmtest.Step{Text: text, Fault: llmtest.Drop, After: 4, Delay: time.Millisecond}, llmtest.Step{Text: text})
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer fake.Close()
	c := &Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", Resume: true}}
	s, err := c.Stream(context.Background(), &llm.Request{Model: llm.Model{ID: "m"}, Messages: []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("count")}}}})
	if err != nil {
		t.Fatal(err)
	}
	s.OnDrop(func(d *llm.Drop) bool {
		return d.Method == llm.ResumeContinuation && d.Reconnect(context.Background()) == nil
	})
	msg, err := llm.Collect(s)
	if err != nil || msg.TextOf() != text {
		t.Fatalf("%q, %v; want the answer continued", msg.TextOf(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	var b struct {
		Continue *bool `json:"continue_final_message"`
		AddGen   *bool `json:"add_generation_prompt"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(bodies[1], &b); err != nil {
		t.Fatal(err)
	}
	last := b.Messages[len(b.Messages)-1]
	if b.Continue == nil || !*b.Continue || b.AddGen == nil || *b.AddGen || last.Role != "assistant" || last.Content != "one two three four" {
		t.Errorf("continuation %s", bodies[1])
	}
}
