package session

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
	"github.com/rally-agent/rally/window"
)

// statedOverflow is an OpenAI-style overflow that states the window.
func statedOverflow(window, requested int) error {
	return apiErr(400, `{"error":{"message":"This model's maximum context length is `+itoa(window)+` tokens. However, your messages resulted in `+itoa(requested)+` tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestLearnedWindow: an overflow that states the window teaches it to
// the session (State, the keep budget) and to the store, where a new
// session of another process finds it before its first call.
func TestLearnedWindow(t *testing.T) {
	store := &window.File{Path: window.Path(t.TempDir())}
	model := llm.Model{ID: "qwen", Provider: "local", ContextWindow: 128000}
	f := &fake{steps: []step{{err: statedOverflow(3000, 3400)}, {text: "summary"}, {text: "answer"}}}
	s, _, stop := newSession(t, f, Config{Model: model, Windows: store, Resume: &journal.Loaded{Messages: history(12)}})
	if got := s.State().Model.ContextWindow; got != 128000 {
		t.Fatalf("window before learning %d", got)
	}
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if got := s.State().Model.ContextWindow; got != 3000 {
		t.Errorf("State window %d, want the learned 3000", got)
	}
	if n, err := store.Window(t.Context(), "local", "", "qwen"); n != 3000 || err != nil {
		t.Errorf("store has %d (%v), want 3000", n, err)
	}
	// The context after compaction was sized for the learned window: the
	// kept part within 40% of it.
	if kept := llm.EstimateTokens(f.request(2).Messages[1:]); kept > 3000*40/100+200 {
		t.Errorf("kept %d tokens for a 3000-token window", kept)
	}

	// Another process: a new session over the same store.
	s2, _, stop2 := newSession(t, &fake{}, Config{Model: model, Windows: &window.File{Path: store.Path}})
	defer stop2()
	if got := s2.State().Model.ContextWindow; got != 3000 {
		t.Errorf("a new session's window is %d, want the learned 3000", got)
	}
	// A configured window smaller than the learned one wins.
	s3, _, stop3 := newSession(t, &fake{}, Config{Model: llm.Model{ID: "qwen", Provider: "local", ContextWindow: 2000}, Windows: store})
	defer stop3()
	if got := s3.State().Model.ContextWindow; got != 2000 {
		t.Errorf("configured 2000 vs learned 3000: window %d", got)
	}
}

// TestKnownWindowNotOverflowedAgain: with the window known, a context
// that would pass the threshold is compacted before the call, so the
// provider never sees it.
func TestKnownWindowNotOverflowedAgain(t *testing.T) {
	store := &window.File{Path: window.Path(t.TempDir())}
	if err := store.Learn(t.Context(), "local", "", "qwen", 2000); err != nil {
		t.Fatal(err)
	}
	f := &fake{steps: []step{{text: "summary"}, {text: "answer"}}}
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "qwen", Provider: "local"}, Windows: store,
		Resume: &journal.Loaded{Messages: history(12)}})
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	ends := of[CompactionEndEvent](rec)
	if len(ends) != 1 || ends[0].Reason != ReasonThreshold || f.calls() < 2 {
		t.Fatalf("%d calls, compactions %+v; want the summary then the answer", f.calls(), ends)
	}
	for i := range f.calls() {
		r := f.request(i)
		if summary := r.System == summaryPrompt; summary != (i < f.calls()-1) {
			t.Errorf("request %d: summary %v", i+1, summary)
		}
		if n := requestTokens(r); n > 2000 {
			t.Errorf("request %d needs %d tokens, window 2000", i+1, n)
		}
	}
}

// requestTokens is a request's size by the one estimate, with its output
// budget: what a server that counts both would check.
func requestTokens(r *llm.Request) int {
	return llm.EstimateTokens(r.Messages) + (len(r.System)+3)/4 + r.MaxTokens
}

// TestLonePromptTooLarge: a prompt that alone exceeds the window fails at
// once, naming both numbers, with no call at all (no summary either), and
// does not stay in the context to break the next prompt.
func TestLonePromptTooLarge(t *testing.T) {
	f := &fake{}
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1000},
		Resume: &journal.Loaded{Messages: history(3)}})
	huge := strings.Repeat("all work and no play ", 400) // ~2,100 tokens
	err := s.Prompt(t.Context(), huge, PromptOptions{})
	if !errors.Is(err, ErrContextOverflow) || f.calls() != 0 {
		t.Fatalf("err %v after %d calls; want a context overflow and no call", err, f.calls())
	}
	var tl *TooLargeError
	if !errors.As(err, &tl) || !tl.Prompt || tl.Window != 1000 || tl.Need < 2000 {
		t.Fatalf("error %#v", err)
	}
	for _, want := range []string{"prompt alone", "window of 1000 tokens", itoa(tl.Need) + " tokens"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	if n := len(s.Messages()); n != 6 {
		t.Errorf("context has %d messages, want the 6 it had", n)
	}
	// The next, ordinary prompt goes through.
	if err := s.Prompt(t.Context(), "short one", PromptOptions{}); err != nil || f.calls() != 1 {
		t.Fatalf("next prompt: %v after %d calls", err, f.calls())
	}
	stop()
	// A client saw the prompt and a failed answer saying why.
	var failed *llm.Message
	for _, e := range of[MessageEndEvent](rec) {
		if e.Message.Role == llm.Assistant && failed == nil {
			failed = e.Message
		}
	}
	if failed == nil || failed.StopReason != llm.Error || !strings.Contains(failed.ErrorMessage, "prompt alone") {
		t.Errorf("failed answer %+v", failed)
	}

	// Learned from the overflow itself: still no summary call.
	f2 := &fake{steps: []step{{err: statedOverflow(1000, 2200)}}}
	s2, rec2, stop2 := newSession(t, f2, Config{Resume: &journal.Loaded{Messages: history(3)}})
	err = s2.Prompt(t.Context(), huge, PromptOptions{})
	stop2()
	if !errors.As(err, &tl) || !tl.Prompt || f2.calls() != 1 || len(of[CompactionStartEvent](rec2)) != 0 {
		t.Fatalf("err %v after %d calls and %d compactions", err, f2.calls(), len(of[CompactionStartEvent](rec2)))
	}
}

// TestRollingSummary: an older part larger than the window is summarised
// in pieces, every summary request fitting the window, each carrying the
// summary so far; a single huge message is cut to its head and tail.
func TestRollingSummary(t *testing.T) {
	hist := history(30) // ~6,000 tokens
	big := strings.Repeat("x", 30000) + "THE-END"
	hist[3].Content = []llm.Content{llm.Text("HEAD " + big)}
	var steps []step
	steps = append(steps, step{err: statedOverflow(2000, 14000)})
	for i := range 20 {
		steps = append(steps, step{text: "summary " + itoa(i+1)})
	}
	f := &fake{steps: steps}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 128000}, Resume: &journal.Loaded{Messages: hist}})
	defer stop()
	err := s.Prompt(context.Background(), "next", PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var summaries []*llm.Request
	for i := 1; i < f.calls(); i++ {
		if r := f.request(i); r.System == summaryPrompt {
			summaries = append(summaries, r)
		}
	}
	if len(summaries) < 3 {
		t.Fatalf("%d summary requests for ~8,000 tokens and a 2,000-token window, want several", len(summaries))
	}
	for i, r := range summaries {
		if n := requestTokens(r); n > 2000 {
			t.Errorf("summary request %d needs %d tokens, window 2000", i+1, n)
		}
		if i > 0 && !strings.Contains(r.Messages[0].TextOf(), "summary "+itoa(i)) {
			t.Errorf("summary request %d does not carry summary %d", i+1, i)
		}
	}
	all := ""
	for _, r := range summaries {
		all += r.Messages[0].TextOf()
	}
	if !strings.Contains(all, "HEAD xxx") || !strings.Contains(all, "xxxTHE-END") || !strings.Contains(all, "characters cut") {
		t.Errorf("the huge message is not cut to head and tail with a marker")
	}
	// The call after compaction fits too.
	last := f.request(f.calls() - 1)
	if n := llm.EstimateTokens(last.Messages); n > 2000 || last.System == summaryPrompt {
		t.Errorf("the call after compaction needs %d tokens", n)
	}
}

// TestUsageBeforeCompactionIgnored: the kept answers' usage counted the
// context before its compaction and does not measure the new one.
func TestUsageBeforeCompactionIgnored(t *testing.T) {
	old := llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("kept")}, Timestamp: 100, Usage: &llm.Usage{Input: 90000}}
	summary := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(journal.SummaryText("s"))}, Timestamp: 200}
	fresh := old
	fresh.Timestamp = 300
	fresh.Usage = &llm.Usage{Input: 700, Output: 10}
	for _, tt := range []struct {
		name string
		ms   []llm.Message
		want int
	}{
		{"stale", []llm.Message{summary, old}, llm.EstimateTokens([]llm.Message{summary, old})},
		{"fresh", []llm.Message{summary, old, fresh}, 710},
		{"uncompacted", []llm.Message{{Role: llm.User, Timestamp: 50}, old}, 90000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := contextTokens(tt.ms); got != tt.want {
				t.Errorf("contextTokens %d, want %d", got, tt.want)
			}
		})
	}
}

// TestToolLoopPausesToCompact: within a run, a call after tool results
// that would pass the threshold of a known window waits for a compaction,
// and the run continues after it: the tool runs once, nothing overflows.
func TestToolLoopPausesToCompact(t *testing.T) {
	c := &counter{}
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
	f := &fake{steps: []step{
		{text: "let me count", calls: []llm.Content{call}, usage: &llm.Usage{Input: 1800, Output: 20}},
		{text: "summary of the counting"},
		{text: "counted once"},
	}}
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 2000},
		Tools: []tool.Tool{c}, Resume: &journal.Loaded{Messages: history(2)}})
	if err := s.Prompt(t.Context(), "count", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if c.n != 1 || f.calls() != 3 {
		t.Fatalf("tool ran %d times in %d calls, want once in 3", c.n, f.calls())
	}
	if f.request(1).System != summaryPrompt {
		t.Fatalf("second call is not the summary: %q", f.request(1).System)
	}
	ends := of[CompactionEndEvent](rec)
	if len(ends) != 1 || ends[0].Reason != ReasonThreshold || !ends[0].WillRetry {
		t.Fatalf("compaction_end %+v", ends)
	}
	last := f.request(2).Messages
	if !strings.Contains(last[0].TextOf(), "summary of the counting") || last[len(last)-1].Role != llm.ToolResult {
		t.Errorf("continued call sends %d messages from %q to %v", len(last), last[0].TextOf(), last[len(last)-1].Role)
	}
	if ae := of[AgentEndEvent](rec); len(ae) != 2 || !ae[0].WillRetry || ae[1].WillRetry {
		t.Errorf("agent_end %d times", len(ae))
	}
}
