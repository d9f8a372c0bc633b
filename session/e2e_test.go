package session

import (
	"context"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// TestEndToEndOverLoopback runs a session against the fake LLM over real
// HTTP: a 503, then an answer. Waits are tiny so no fake clock is needed.
func TestEndToEndOverLoopback(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "all good"})
	pol := retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond}
	j, err := journal.Create(t.TempDir(), "/work")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{
		Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key-000000001234", Provider: "fake"}},
		Model:    llm.Model{ID: "m", Provider: "fake", API: llm.APIOpenAICompletions, ContextWindow: 100000},
		Retry:    pol.For,
		Store:    j,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	stop := s.Subscribe(rec.add)
	if err := s.Prompt(context.Background(), "hi", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Attempt != "1" || reqs[1].Attempt != "2" {
		t.Fatalf("requests %+v, want attempts 1 then 2", reqs)
	}
	if st := of[AutoRetryStartEvent](rec); len(st) != 1 || st[0].ErrorClass != retry.Transient {
		t.Errorf("starts %+v", st)
	}
	// Rule 11: the failed message is kept, marked, and not sent again.
	j.Close()
	loaded, err := journal.Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for _, e := range loaded.Entries {
		if e.Retried {
			retried++
			if e.Message == nil || e.Message.StopReason != llm.Error {
				t.Errorf("retried entry %+v is not the failed message", e)
			}
		}
	}
	if retried != 1 {
		t.Errorf("%d retried entries, want 1", retried)
	}
	if len(loaded.Messages) != 2 || loaded.Messages[1].TextOf() != "all good" {
		t.Errorf("resumed context %+v, want the prompt and the answer only", loaded.Messages)
	}
}
