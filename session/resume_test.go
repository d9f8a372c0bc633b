package session

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// argsTool records the arguments of every run.
type argsTool struct {
	mu   sync.Mutex
	runs []string
}

func (a *argsTool) Spec() llm.Tool {
	return llm.Tool{Name: "write", Description: "writes", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (a *argsTool) Run(_ context.Context, args json.RawMessage) (tool.Result, error) {
	a.mu.Lock()
	a.runs = append(a.runs, string(args))
	a.mu.Unlock()
	return tool.Result{Content: []llm.Content{llm.Text("written")}}, nil
}

// resumeSession is a session on the fake LLM's Responses API over
// loopback; resume turns on both the policy and the client's background
// mode, as settings do for retry.streaming "resume" with the provider's
// resume set.
// Call stop before reading the recorder: it delivers every event.
func resumeSession(t testing.TB, srv *llmtest.Server, resume bool, tools ...tool.Tool) (s *Session, rec *recorder, j *journal.Journal, stop func()) {
	return resumeOn(t, srv, llm.APIOpenAIResponses, resume, tools...)
}

// resumeOn is resumeSession on the fake LLM's api.
func resumeOn(t testing.TB, srv *llmtest.Server, api string, resume bool, tools ...tool.Tool) (s *Session, rec *recorder, j *journal.Journal, stop func()) {
	t.Helper()
	pol := retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond, Resume: resume}
	j, err := journal.Create(t.TempDir(), "/work")
	if err != nil {
		t.Fatal(err)
	}
	o := llm.ClientOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key-000000005678", Provider: "fake", Resume: resume}
	var p llm.Provider = &openai.Responses{ClientOptions: o}
	if api == llm.APIOpenAICompletions {
		p = &openai.Completions{ClientOptions: o}
	}
	s, err = New(Config{
		Provider: p,
		Model:    llm.Model{ID: "m", Provider: "fake", API: api, ContextWindow: 100000},
		Retry:    pol.For,
		Store:    j,
		Tools:    tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec = &recorder{}
	return s, rec, j, s.Subscribe(rec.add)
}

// streamed is the text of every text delta the session emitted, in order:
// what a client appending deltas shows.
func streamed(rec *recorder) string {
	var b strings.Builder
	for _, u := range of[MessageUpdateEvent](rec) {
		if u.Assistant != nil && u.Assistant.Type == llm.EventTextDelta {
			b.WriteString(u.Assistant.Delta)
		}
	}
	return b.String()
}

// TestResumeTextDrop drops a background stream at 70 % of its chunks.
// With resume the same message goes on from the cursor: one message, its
// text streamed exactly once, no message_discarded, a stream_resumed
// inside an auto_retry pair marked "cursor". With restart the partial is
// discarded and the answer streamed again.
func TestResumeTextDrop(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + string(rune('a'+i%26))
	}
	text := strings.Join(words, " ")
	for _, tc := range []struct {
		name       string
		resume     bool
		discarded  int
		wantPaths  []string
		streamedAs string
	}{
		{"resume", true, 0, []string{"/v1/responses", "/v1/responses/resp_llmtest1"}, text},
		{"restart", false, 1, []string{"/v1/responses", "/v1/responses"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Step{Text: text, Fault: llmtest.Drop, After: 28, Delay: time.Millisecond}, llmtest.Step{Text: text})
			s, rec, j, stop := resumeSession(t, srv, tc.resume)
			if err := s.Prompt(t.Context(), "write", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			var paths []string
			for _, r := range srv.Requests() {
				paths = append(paths, r.Path)
			}
			if strings.Join(paths, " ") != strings.Join(tc.wantPaths, " ") {
				t.Fatalf("requests %v, want %v", paths, tc.wantPaths)
			}
			msgs := s.Messages()
			if len(msgs) != 2 || msgs[1].TextOf() != text {
				t.Fatalf("messages %+v, want the prompt and the whole answer", msgs)
			}
			if n := len(of[MessageDiscardedEvent](rec)); n != tc.discarded {
				t.Errorf("%d message_discarded, want %d", n, tc.discarded)
			}
			if !tc.resume {
				return
			}
			for _, e := range of[MessageEndEvent](rec) {
				if e.Message.StopReason == llm.Error {
					t.Errorf("message_end with an error in the middle: %q", e.Message.ErrorMessage)
				}
			}
			if got := streamed(rec); got != tc.streamedAs {
				t.Errorf("deltas %q, want the text once: %q", got, tc.streamedAs)
			}
			if got := srv.Requests()[1].Outcome; got != "resumed after 31" {
				t.Errorf("resume request %q, want it to start after the last event seen (31: two opening events, the item and part, 28 deltas)", got)
			}
			starts, ends, res := of[AutoRetryStartEvent](rec), of[AutoRetryEndEvent](rec), of[StreamResumedEvent](rec)
			if len(starts) != 1 || starts[0].ErrorClass != retry.Transient || starts[0].Resume != llm.ResumeCursor || starts[0].Attempt != 1 {
				t.Errorf("auto_retry_start %+v, want one, transient, resume cursor", starts)
			}
			if len(ends) != 1 || !ends[0].Success || ends[0].Attempt != 1 {
				t.Errorf("auto_retry_end %+v, want one success at attempt 1", ends)
			}
			if len(res) != 1 || res[0].Cursor != "31" || res[0].Attempt != 1 || res[0].Continuation {
				t.Errorf("stream_resumed %+v, want one from cursor 31", res)
			}
			// The order a client sees: the wait, the resume, the end of
			// the chain, then the rest of the same message.
			order := strings.Join(rec.types(), " ")
			if !strings.Contains(order, "message_update auto_retry_start stream_resumed auto_retry_end message_update") {
				t.Errorf("events %s: want auto_retry_start stream_resumed auto_retry_end between updates", order)
			}
			j.Close()
			loaded, err := journal.Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			var answers []journal.Entry
			for _, e := range loaded.Entries {
				if e.Message != nil && e.Message.Role == llm.Assistant {
					answers = append(answers, e)
				}
			}
			if len(answers) != 1 || answers[0].Retried || answers[0].Decision() == nil || answers[0].Decision().End != journal.EndResumed {
				t.Errorf("journal answers %+v, want the resumed message once, marked resumed", answers)
			}
		})
	}
}

// TestResumeToolCallDrop drops the stream inside a tool call's streamed
// arguments. Under each strategy the tool runs exactly once, with the
// whole arguments: resume completes them from the cursor, restart
// discards the partial call and streams it again; never a run on half
// the arguments.
func TestResumeToolCallDrop(t *testing.T) {
	args := `{"path":"notes/today.txt","content":"one two three four five six"}`
	call := []llmtest.ToolCall{{ID: "call_w", Name: "write", Arguments: args, Chunks: 6}}
	drop := llmtest.Step{ToolCalls: call, Fault: llmtest.Drop, After: 3, Delay: time.Millisecond}
	restart := []llmtest.Step{drop, {ToolCalls: call}, {Text: "done"}}
	for _, tc := range []struct {
		name    string
		api     string
		resume  bool
		script  []llmtest.Step
		resumed int
	}{
		{"cursor", llm.APIOpenAIResponses, true, []llmtest.Step{drop, {Text: "done"}}, 1},
		{"restart", llm.APIOpenAIResponses, false, restart, 0},
		// A continuation never resumes inside a tool call: it restarts.
		{"continuation", llm.APIOpenAICompletions, true, restart, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.script...)
			w := &argsTool{}
			s, rec, _, stop := resumeOn(t, srv, tc.api, tc.resume, w)
			if err := s.Prompt(t.Context(), "write it", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if len(w.runs) != 1 || w.runs[0] != args {
				t.Fatalf("tool runs %q, want one with %s", w.runs, args)
			}
			if got := s.Messages()[len(s.Messages())-1].TextOf(); got != "done" {
				t.Errorf("last answer %q", got)
			}
			if n := len(of[StreamResumedEvent](rec)); n != tc.resumed {
				t.Errorf("%d stream_resumed, want %d", n, tc.resumed)
			}
		})
	}
}

// TestResumeAbortCancels: an abort in background mode ends the call at
// once and asks the provider to stop generating the stored response
// (POST /responses/{id}/cancel), which would otherwise run, billed, to its
// end with nobody reading it.
func TestResumeAbortCancels(t *testing.T) {
	reqs := make(chan llmtest.Request, 8)
	srv := llmtest.New(llmtest.Step{Text: strings.Repeat("word ", 200), Delay: 5 * time.Millisecond})
	srv.OnRequest = func(r llmtest.Request) { reqs <- r }
	srv.Start(t)
	s, _, _, stop := resumeSession(t, srv, true)
	defer stop()
	var once sync.Once
	s.Subscribe(func(e Event) {
		if _, ok := e.(MessageUpdateEvent); ok {
			once.Do(func() { go s.Abort() })
		}
	})
	err := s.Prompt(t.Context(), "go on", PromptOptions{})
	if err == nil {
		t.Fatal("an aborted prompt succeeded")
	}
	for {
		select {
		case r := <-reqs:
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/responses/resp_llmtest1/cancel") {
				if r.Outcome != "cancelled" {
					t.Errorf("cancel outcome %q", r.Outcome)
				}
				return
			}
		case <-t.Context().Done():
			return
		case <-time.After(10 * time.Second):
			t.Fatal("no cancel of the background response after the abort")
		}
	}
}
