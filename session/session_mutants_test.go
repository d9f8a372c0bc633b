package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// The tests in this file each catch mutants that lived through the rest of
// the session tests (scripts/mutate.sh): what a client reads back about a
// session (stats, errors) and context added before a prompt.

// TestStatsAfterToolRun: after a prompt whose answer called a tool, the
// stats count each kind of message and sum the answers' usage.
func TestStatsAfterToolRun(t *testing.T) {
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
	f := &fake{steps: []step{
		{text: "counting", calls: []llm.Content{call}, usage: &llm.Usage{Input: 100, Output: 7}},
		{text: "done", usage: &llm.Usage{Input: 120, Output: 3}},
	}}
	s, _, stop := newSession(t, f, Config{Tools: []tool.Tool{&counter{}}})
	defer stop()
	if err := s.Prompt(t.Context(), "count once", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.UserMessages != 1 || st.AssistantMessages != 2 || st.ToolCalls != 1 || st.ToolResults != 1 || st.TotalMessages != 4 {
		t.Errorf("stats %+v, want 1 user, 2 assistant, 1 tool call, 1 tool result, 4 in all", st)
	}
	if st.Tokens.Input != 220 || st.Tokens.Output != 10 {
		t.Errorf("tokens %+v, want input 220 and output 10", st.Tokens)
	}
}

// TestAddContextReachesThePrompt: a message added with AddContext before a
// prompt is sent with it, before it, once.
func TestAddContextReachesThePrompt(t *testing.T) {
	f := &fake{steps: []step{{text: "one"}, {text: "two"}}}
	s, _, stop := newSession(t, f, Config{})
	defer stop()
	s.AddContext(user("the file says hello"))
	if err := s.Prompt(t.Context(), "what does it say?", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Prompt(t.Context(), "and now?", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range f.request(0).Messages {
		texts = append(texts, m.TextOf())
	}
	if got := strings.Join(texts, " | "); got != "the file says hello | what does it say?" {
		t.Errorf("first request carries %q", got)
	}
	if n := strings.Count(allText(f.request(1).Messages), "the file says hello"); n != 1 {
		t.Errorf("the added context is in the second request %d times, want once", n)
	}
}

// TestFirstCallErrorNamesNoRetry: a prompt refused at its first call
// fails with the provider's error alone, not "retry failed after".
func TestFirstCallErrorNamesNoRetry(t *testing.T) {
	f := &fake{steps: []step{{err: apiErr(401, `{"error":{"message":"invalid api key"}}`)}}}
	s, _, stop := newSession(t, f, Config{})
	defer stop()
	err := s.Prompt(t.Context(), "hi", PromptOptions{})
	if err == nil || strings.Contains(err.Error(), "retry failed") || !strings.Contains(err.Error(), "invalid api key") {
		t.Errorf("err %v, want the refusal without a retry count", err)
	}
}

func allText(ms []llm.Message) string {
	var b strings.Builder
	for i := range ms {
		b.WriteString(ms[i].TextOf() + "\n")
	}
	return b.String()
}

// TestRetryBeforeAnyTextDiscardsNothing: a call refused before anything
// streamed leaves no message to discard: its retry emits no
// message_discarded.
func TestRetryBeforeAnyTextDiscardsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}, {text: "fine"}}}
		s, rec, stop := newSession(t, f, Config{})
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if n := len(of[MessageDiscardedEvent](rec)); n != 0 || f.calls() != 2 {
			t.Errorf("%d message_discarded in %d calls, want none in 2", n, f.calls())
		}
	})
}

// TestStateLoadWarnings: the warnings of loading a resumed session file
// are in the session's state.
func TestStateLoadWarnings(t *testing.T) {
	s, _, stop := newSession(t, &fake{}, Config{Resume: &journal.Loaded{Messages: history(1), Warnings: []string{"line 3: not JSON"}}})
	defer stop()
	if got := s.State().LoadWarnings; len(got) != 1 || got[0] != "line 3: not JSON" {
		t.Errorf("load warnings %q", got)
	}
}

// TestContextTokensSkipZeroUsage: an answer that reported a usage of all
// zeros measures nothing; the context's size comes from the answer
// before it that did count.
func TestContextTokensSkipZeroUsage(t *testing.T) {
	counted := answer("counted")
	counted.Timestamp, counted.Usage = 2, &llm.Usage{Input: 1000, Output: 20}
	zero := answer("zero")
	zero.Timestamp, zero.Usage = 4, &llm.Usage{}
	first, second := user("one"), user("two")
	first.Timestamp, second.Timestamp = 1, 3
	s, _, stop := newSession(t, &fake{}, Config{Resume: &journal.Loaded{Messages: []llm.Message{first, counted, second, zero}}})
	defer stop()
	if got := s.Stats().ContextTokens; got < 1020 {
		t.Errorf("context tokens %d, want the 1,020 the earlier answer counted plus what followed", got)
	}
}

// unclassifiedLog records what a session hands to Config.Unclassified.
type unclassifiedLog struct{ statuses []int }

func (u *unclassifiedLog) Record(_ context.Context, f retry.Failure, _ retry.Report) error {
	u.statuses = append(u.statuses, f.Status)
	return nil
}

// TestOnlyUnclassifiedFailuresKept: a failure only the fallback could
// judge is handed to Config.Unclassified; one a rule knows is not.
func TestOnlyUnclassifiedFailuresKept(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		kept bool
	}{
		{"known", apiErr(401, `{"error":{"message":"invalid api key"}}`), false},
		{"unknown", errors.New("the flux capacitor broke"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &unclassifiedLog{}
			s, _, stop := newSession(t, &fake{steps: []step{{err: tt.err}}}, Config{Unclassified: u})
			defer stop()
			s.Prompt(t.Context(), "hi", PromptOptions{})
			if kept := len(u.statuses) > 0; kept != tt.kept {
				t.Errorf("kept %v (%v), want %v", kept, u.statuses, tt.kept)
			}
		})
	}
}
