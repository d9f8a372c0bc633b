package rpc

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// serveInProcess runs Serve on pipes and returns a client attached to it.
// The test ends with EOF on the server's input and waits for Serve.
func serveInProcess(t *testing.T, cfg Config) *Client {
	t.Helper()
	cr, cw, wait := startServe(cfg)
	c := NewClient(cr, cw)
	t.Cleanup(func() {
		c.Close()
		if err := wait(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return c
}

// startServe runs Serve on pipes: out is what it writes, in what it
// reads, and wait returns its result once in is closed.
func startServe(cfg Config) (out *io.PipeReader, in *io.PipeWriter, wait func() error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), sr, sw, cfg)
		sw.Close()
	}()
	return cr, cw, func() error { return <-done }
}

func simSession(t *testing.T, delay time.Duration) *session.Session {
	t.Helper()
	s, err := session.New(session.Config{Provider: &sim.Model{Delay: delay}, Model: sim.Info(),
		Compaction: session.CompactionConfig{KeepRecentTokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recorder collects a client's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
	wake   chan struct{}
}

func record(c *Client) *recorder {
	r := &recorder{wake: make(chan struct{}, 1)}
	c.Subscribe(func(e Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		select {
		case r.wake <- struct{}{}:
		default:
		}
	})
	return r
}

// waitFor returns the first event of type T at or after index from, and
// its index, failing the test after 10 s.
func waitFor[T Event](t *testing.T, r *recorder, from int) (T, int) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if e, ok := r.events[i].(T); ok {
				r.mu.Unlock()
				return e, i
			}
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline.C:
			var zero T
			t.Fatalf("no %s event after #%d", zero.Kind(), from)
		}
	}
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, string(e.Kind()))
	}
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientEveryCommandInProcess(t *testing.T) {
	ctx := ctxT(t)
	first := simSession(t, -1)
	second := simSession(t, -1)
	other := llm.Model{ID: "other", Name: "Other", API: llm.APISim, Provider: "sim", Input: []string{"text"}, ContextWindow: 1000, MaxTokens: 100}
	c := serveInProcess(t, Config{
		Session:    first,
		NewSession: func(context.Context) (*session.Session, error) { return second, nil },
		Models:     func() []llm.Model { return []llm.Model{sim.Info(), other} },
		Connect: func(_ context.Context, m llm.Model) (llm.Target, error) {
			return llm.Target{Provider: &sim.Model{Delay: -1}, Model: m}, nil
		},
	})
	rec := record(c)

	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Model.ID != "sim" || st.ThinkingLevel != "off" || st.IsStreaming || st.SteeringMode != OneAtATime ||
		st.FollowUpMode != OneAtATime || st.SessionID == "" || !st.AutoRetryEnabled || st.MessageCount != 0 {
		t.Errorf("initial state %+v", st)
	}

	if err := c.Prompt(ctx, "What does rally do?", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	upd, _ := waitFor[session.MessageUpdateEvent](t, rec, 0)
	if upd.Assistant == nil || upd.Assistant.Partial != upd.Message || upd.Message.Role != llm.Assistant {
		t.Errorf("message_update decoded as %+v", upd)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil || len(msgs) != 2 || msgs[0].Role != llm.User || msgs[1].Role != llm.Assistant {
		t.Fatalf("messages %v %v", msgs, err)
	}
	text, err := c.GetLastAssistantText(ctx)
	if err != nil || !strings.Contains(text, "survive provider failures") {
		t.Errorf("last text %q %v", text, err)
	}
	stats, err := c.GetSessionStats(ctx)
	if err != nil || stats.UserMessages != 1 || stats.AssistantMessages != 1 || stats.TotalMessages != 2 ||
		stats.Tokens.Total == 0 || stats.ContextUsage == nil || stats.ContextUsage.ContextWindow != 128000 {
		t.Fatalf("stats %+v %v", stats, err)
	}
	if n := first.Stats().ContextTokens; stats.ContextUsage.Tokens != n || n == 0 {
		t.Errorf("contextUsage.tokens %d, the session's measure %d", stats.ContextUsage.Tokens, n)
	}

	for _, step := range []struct {
		name string
		call func() error
	}{
		{"steer", func() error { return c.Steer(ctx, "later") }},
		{"follow_up", func() error { return c.FollowUp(ctx, "after") }},
		{"set_auto_retry", func() error { return c.SetAutoRetry(ctx, false) }},
		{"set_auto_compaction", func() error { return c.SetAutoCompaction(ctx, false) }},
		{"set_session_name", func() error { return c.SetSessionName(ctx, "  my work ") }},
		{"abort_retry", func() error { return c.AbortRetry(ctx) }},
		{"abort", func() error { return c.Abort(ctx) }},
	} {
		if err := step.call(); err != nil {
			t.Errorf("%s: %v", step.name, err)
		}
	}
	st, _ = c.GetState(ctx)
	if st.AutoRetryEnabled || st.AutoCompactionEnabled || st.SessionName != "my work" || st.PendingMessageCount != 2 {
		t.Errorf("state after the setters %+v", st)
	}

	models, err := c.GetAvailableModels(ctx)
	if err != nil || len(models) != 2 {
		t.Fatalf("models %v %v", models, err)
	}
	m, err := c.SetModel(ctx, "sim", "other")
	if err != nil || m.ID != "other" {
		t.Fatalf("set_model %v %v", m, err)
	}
	if _, err := c.SetModel(ctx, "nope", "x"); err == nil || !strings.Contains(err.Error(), "model not found: nope/x") {
		t.Errorf("set_model of an unknown model: %v", err)
	}

	cancelled, err := c.NewSession(ctx)
	if err != nil || cancelled {
		t.Fatalf("new_session %v %v", cancelled, err)
	}
	st, _ = c.GetState(ctx)
	if st.MessageCount != 0 || st.Model.ID != "other" || st.AutoRetryEnabled || st.SessionName != "" {
		t.Errorf("new session's state %+v (model and auto-retry carry over, the rest does not)", st)
	}
	if text, err := c.GetLastAssistantText(ctx); err != nil || text != "" {
		t.Errorf("new session's last text %q %v", text, err)
	}
}

func TestCompactInProcess(t *testing.T) {
	ctx := ctxT(t)
	c := serveInProcess(t, Config{Session: simSession(t, -1)})
	rec := record(c)
	_, err := c.Compact(ctx)
	var rerr *Error
	if !errors.As(err, &rerr) || !strings.Contains(rerr.Message, "nothing to compact") {
		t.Fatalf("compact of an empty session: %v", err)
	}
	for _, p := range []string{"What does rally do?", "and then?", "tell me more"} {
		if err := c.Prompt(ctx, p, PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		c.WaitSettled(ctx)
	}
	res, err := c.Compact(ctx)
	if err != nil || res.Summary == "" || res.TokensBefore == 0 {
		t.Fatalf("compact: %+v %v", res, err)
	}
	_, i := waitFor[session.CompactionEndEvent](t, rec, 0) // the empty session's
	end, _ := waitFor[session.CompactionEndEvent](t, rec, i+1)
	if end.Reason != session.ReasonManual || end.Result == nil {
		t.Errorf("compaction_end %+v", end)
	}
}

func TestPromptWhileRunning(t *testing.T) {
	ctx := ctxT(t)
	c := serveInProcess(t, Config{Session: simSession(t, 50*time.Millisecond)})
	rec := record(c)
	if err := c.Prompt(ctx, "What does rally do?", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil || !st.IsStreaming {
		t.Errorf("right after prompt: %+v %v", st, err)
	}
	err = c.Prompt(ctx, "again", PromptOptions{})
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Command != CmdPrompt || !strings.Contains(rerr.Message, "streamingBehavior") {
		t.Fatalf("second prompt: %v", err)
	}
	for _, b := range []string{Steer, FollowUp} {
		if err := c.Prompt(ctx, "queued "+b, PromptOptions{StreamingBehavior: b}); err != nil {
			t.Errorf("prompt with %s: %v", b, err)
		}
	}
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	// abort answers once the run has settled.
	if _, i := waitFor[session.AgentSettledEvent](t, rec, 0); i < 0 {
		t.Fatal("unreachable")
	}
	st, _ = c.GetState(ctx)
	if st.IsStreaming {
		t.Errorf("streaming after abort: %+v", st)
	}
	if err := c.Prompt(ctx, "fresh", PromptOptions{}); err != nil {
		t.Errorf("prompt after abort: %v", err)
	}
	c.Abort(ctx)
}

// TestRetryInProcess drives a retry through the server with the fake LLM:
// get_state during the wait, abort_retry, and WaitSettled across retries.
func TestRetryInProcess(t *testing.T) {
	ctx := ctxT(t)
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
		llmtest.Step{Text: "finally"})
	model := llm.Model{ID: "m", API: llm.APIOpenAICompletions, Provider: "fake", Input: []string{"text"}, ContextWindow: 100000, MaxTokens: 1000}
	pol := retry.Policy{MaxRetries: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: time.Minute}
	sess, err := session.New(session.Config{Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", Provider: "fake"}}, Model: model, Retry: pol.For})
	if err != nil {
		t.Fatal(err)
	}
	c := serveInProcess(t, Config{Session: sess})
	rec := record(c)
	if err := c.Prompt(ctx, "hi", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rec.types(), " ")
	for _, want := range []string{"agent_end auto_retry_start", "auto_retry_end", "agent_settled"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %s", want, got)
		}
	}
	if !strings.HasSuffix(got, "agent_settled") || strings.Count(got, "agent_start") != 3 {
		t.Errorf("WaitSettled returned before the last run settled: %s", got)
	}
	end, _ := waitFor[session.AutoRetryEndEvent](t, rec, 0)
	if !end.Success || end.Attempt != 2 {
		t.Errorf("auto_retry_end %+v", end)
	}
	if text, _ := c.GetLastAssistantText(ctx); text != "finally" {
		t.Errorf("answer %q", text)
	}
}

// TestPromptAnswerOrder: a prompt accepted the moment the previous run
// settles is answered after that run's agent_settled, so WaitSettled waits
// for the new run, not the old one's last line.
func TestPromptAnswerOrder(t *testing.T) {
	ctx := ctxT(t)
	c := serveInProcess(t, Config{Session: simSession(t, -1)})
	rec := record(c)
	for i := range 20 {
		if err := c.Prompt(ctx, "What does rally do?", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		// The next prompt races the first run's end: refused while it runs,
		// accepted once it has settled.
		for {
			err := c.Prompt(ctx, "and then?", PromptOptions{})
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "already running") {
				t.Fatal(err)
			}
		}
		if err := c.WaitSettled(ctx); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(strings.Join(rec.types(), " "), "agent_settled"); got != 2*(i+1) {
			t.Fatalf("round %d: WaitSettled returned with %d agent_settled, want %d", i, got, 2*(i+1))
		}
	}
}
