package session

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// The tests in this file each catch a mutant that lived through the rest
// of the session tests (issue 30, third round): the edges of compaction's
// fit, the prompt's refusal and its record, a run that pauses more than
// once, AbortRetry with and without a retry under way, and what an
// overflow teaches.

// plainOverflow states neither the window nor the request's size.
func plainOverflow() error {
	return apiErr(400, `{"error":{"message":"This model's maximum context length was exceeded.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
}

// longSummary is a summary of about 600 tokens: most of a compacted
// context, so that the context's size after compaction can be matched to
// a window the keep budget does not depend on.
var longSummary = strings.Repeat("summary ", 300)

// compactIn compacts history(4) in a window (longSummary for every summary
// call) and returns the estimate of the context afterwards, how many
// messages follow the summary and the compaction's error.
func compactIn(t *testing.T, window int) (need, kept int, err error) {
	t.Helper()
	steps := make([]step, 40)
	for i := range steps {
		steps[i] = step{text: longSummary}
	}
	f := &fake{steps: steps}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: window},
		Resume: &journal.Loaded{Messages: history(4)}, Compaction: small})
	defer stop()
	_, err = s.Compact(t.Context())
	return s.need(s.sendableView()), len(s.Messages()) - 1, err
}

// TestCompactionFitsTheWindowExactly: a context that fills the window
// exactly fits it. After one summary it is not summarised again (compact.go
// `need <= window`), and after the second it is no TooLargeError
// (`need > window`). The keep budget is 250 tokens in every window here
// (40 % of the window is more), so each summary pass keeps the same part
// whatever the window.
func TestCompactionFitsTheWindowExactly(t *testing.T) {
	t.Run("after one summary", func(t *testing.T) {
		need, kept, err := compactIn(t, 100000)
		if err != nil || kept != 2 {
			t.Fatalf("err %v, kept %d; want one summary keeping 2 messages", err, kept)
		}
		got, keptExact, err := compactIn(t, need)
		if err != nil || keptExact != kept || got != need {
			t.Errorf("in a window of exactly %d: err %v, kept %d of need %d; want no second summary (kept %d)", need, err, keptExact, got, kept)
		}
	})
	t.Run("after two", func(t *testing.T) {
		// 625 is the smallest window whose 40 % is the keep of 250; the
		// first summary leaves more than that, so a second runs and
		// leaves need2, still too much.
		need2, kept, err := compactIn(t, 625)
		var tl *TooLargeError
		if !errors.As(err, &tl) || kept != 1 || need2 <= 625 {
			t.Fatalf("err %v, kept %d, need %d; want a second summary keeping 1 message and still too large", err, kept, need2)
		}
		got, keptExact, err := compactIn(t, need2)
		if err != nil || keptExact != 1 || got != need2 {
			t.Errorf("in a window of exactly %d after two summaries: err %v, kept %d, need %d; want it to fit", need2, err, keptExact, got)
		}
	})
}

// TestSummaryPiecesAfterCalibration: once an overflow taught that the
// estimate falls short by half (the provider counts twice as many tokens),
// every summary request of the overflow's compaction fits the learned
// window by the provider's count: the transcript a piece carries is
// divided by the scale, not multiplied (compact.go `*4/scale`).
func TestSummaryPiecesAfterCalibration(t *testing.T) {
	const window = 4000
	hist := history(30)
	prompt := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("next")}}
	requested := 2 * llm.EstimateTokens(append(append([]llm.Message(nil), hist...), prompt))
	f := &fake{steps: []step{{err: statedOverflow(window, requested)}}} // then "done" for every call
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 128000},
		Resume: &journal.Loaded{Messages: hist}, Compaction: small})
	defer stop()
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.scale < 1.9 || s.scale > 2.1 {
		t.Fatalf("scale %.2f after the overflow, want 2", s.scale)
	}
	summaries := 0
	for i := range f.calls() {
		r := f.request(i)
		if r.System != summaryPrompt {
			continue
		}
		summaries++
		counted := int(float64(llm.EstimateTokens(r.Messages)+(len(r.System)+3)/4)*s.scale) + r.MaxTokens
		if counted > window {
			t.Errorf("summary request %d: about %d tokens by the provider's count with its output, over the window of %d", i, counted, window)
		}
	}
	if summaries < 2 {
		t.Errorf("%d summary requests, want the older part in several pieces", summaries)
	}
}

// TestSummaryPiecesFillToTheLimit: a piece takes lines up to exactly its
// limit before a new one starts (compact.go `b.Len()+len(line) > limit`),
// and an older part with no text at all is still one request, so that
// the summary is the model's and not empty (`len(out) == 0`).
func TestSummaryPiecesFillToTheLimit(t *testing.T) {
	ms := []llm.Message{user("aaaa"), answer("bbbb")}
	line := len("[user]: aaaa\n")
	for _, tt := range []struct {
		name  string
		ms    []llm.Message
		limit int
		want  int
	}{
		{"exactly full", ms, 2*line + 5, 1}, // "[assistant]: bbbb\n" is 5 longer
		{"one over", ms, 2*line + 4, 2},
		{"no text", []llm.Message{{Role: llm.User, Content: []llm.Content{{Type: llm.ImageType, Data: "aGk=", MimeType: "image/png"}}}}, 100, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pieces(tt.ms, tt.limit); len(got) != tt.want {
				t.Errorf("%d pieces %q, want %d", len(got), got, tt.want)
			}
		})
	}
	t.Run("image only older part", func(t *testing.T) {
		img := llm.Message{Role: llm.User, Content: []llm.Content{{Type: llm.ImageType, Data: "aGk=", MimeType: "image/png"}}}
		f := &fake{steps: []step{{text: "the user showed an image"}}}
		s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: append([]llm.Message{img, answer(" ")}, history(1)...)}, Compaction: small})
		defer stop()
		res, err := s.Compact(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if f.calls() != 1 || res.Summary != "the user showed an image" {
			t.Errorf("%d summary requests, summary %q; want one request and the model's summary", f.calls(), res.Summary)
		}
	})
}

// TestMaxTurnsEndsThePromptWithItsError: a tool loop that reaches the
// configured turn limit fails the prompt with agent.ErrMaxTurns, not as if
// it had been aborted (run.go: the run's own error when ctx is live).
func TestMaxTurnsEndsThePromptWithItsError(t *testing.T) {
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
	steps := make([]step, 5)
	for i := range steps {
		steps[i] = step{text: "again", calls: []llm.Content{call}}
	}
	f := &fake{steps: steps}
	s, _, stop := newSession(t, f, Config{Tools: []tool.Tool{&counter{}}, MaxTurns: 2})
	defer stop()
	err := s.Prompt(t.Context(), "count for ever", PromptOptions{})
	if !errors.Is(err, agent.ErrMaxTurns) || errors.Is(err, context.Canceled) || f.calls() != 2 {
		t.Errorf("err %v after %d calls, want agent.ErrMaxTurns after 2", err, f.calls())
	}
}

// TestSecondOverflowNamesTheEstimate: when the retried call overflows
// again and neither overflow stated the request's size, the error names
// rally's estimate of the context, not 0 tokens (run.go `need <= 0`).
func TestSecondOverflowNamesTheEstimate(t *testing.T) {
	f := &fake{steps: []step{{err: plainOverflow()}, {text: "the summary"}, {err: plainOverflow()}}}
	s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
	defer stop()
	err := s.Prompt(t.Context(), "next", PromptOptions{})
	var tl *TooLargeError
	if !errors.As(err, &tl) || !tl.Compacted || tl.Window != 100000 {
		t.Fatalf("err %v, want a TooLargeError after compaction in the window of 100000", err)
	}
	if want := s.need(s.sendableView()); tl.Need != want || want <= 0 {
		t.Errorf("the error names %d tokens, want the estimate %d of the context sent", tl.Need, want)
	}
}

// TestPromptFillingTheWindowIsSent: a prompt that alone needs exactly the
// window is sent, not refused: only a prompt that exceeds it is (run.go's
// prepare, `alone > window`).
func TestPromptFillingTheWindowIsSent(t *testing.T) {
	text := strings.Repeat("all work and no play ", 40)
	probe, _, stopProbe := newSession(t, &fake{}, Config{})
	alone := probe.need([]llm.Message{user(text)})
	stopProbe()
	f := &fake{steps: []step{{text: "ok"}}}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: alone}})
	defer stop()
	if err := s.Prompt(t.Context(), text, PromptOptions{}); err != nil || f.calls() != 1 {
		t.Errorf("a prompt of exactly the window (%d tokens): err %v, %d calls; want it sent", alone, err, f.calls())
	}
}

// TestRefusedPromptRecordsWhy: a prompt refused before any call is in the
// session file with the failed answer that says why; the decision (context
// overflow, failed) is on that answer, recorded, and not on the prompt
// (run.go's refuse, `i == len(added)-1`).
func TestRefusedPromptRecordsWhy(t *testing.T) {
	j, resume := persisted(t, nil)
	f := &fake{}
	s, _, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1000}, Store: j, Resume: resume})
	err := s.Prompt(t.Context(), strings.Repeat("all work and no play ", 400), PromptOptions{})
	stop()
	j.Close()
	var tl *TooLargeError
	if !errors.As(err, &tl) || !tl.Prompt || f.calls() != 0 {
		t.Fatalf("err %v after %d calls, want the prompt refused with no call", err, f.calls())
	}
	ld, err := journal.Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ld.Entries {
		if e.Message == nil {
			continue
		}
		d := e.Decision()
		switch {
		case d == nil:
			got = append(got, string(e.Message.Role)+":-")
		case d.Estimated:
			got = append(got, string(e.Message.Role)+":estimated")
		default:
			got = append(got, string(e.Message.Role)+":"+d.Class+"/"+string(d.End))
		}
	}
	want := "user:- assistant:context_overflow/failed"
	if strings.Join(got, " ") != want {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// bigOutput is a tool whose output is about 1,000 tokens.
type bigOutput struct{}

func (bigOutput) Spec() llm.Tool {
	return llm.Tool{Name: "dump", Description: "dumps", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (bigOutput) Run(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{Content: []llm.Content{llm.Text(strings.Repeat("log line ", 450))}}, nil
}

// bySystem sends summary requests to summaries and the prompt's calls to
// main, so a script of the prompt's calls does not depend on how many
// pieces a compaction takes.
type bySystem struct{ main, summaries *fake }

func (p *bySystem) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	if req.System == summaryPrompt {
		return p.summaries.Stream(ctx, req)
	}
	return p.main.Stream(ctx, req)
}

// newWith is newSession over any provider.
func newWith(t *testing.T, p llm.Provider, cfg Config) (*Session, *recorder, func()) {
	t.Helper()
	cfg.Provider = p
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	return s, rec, s.Subscribe(rec.add)
}

// TestToolLoopPausesAgain: a tool loop whose context passes the threshold
// twice pauses and compacts twice in one prompt: a compaction that
// brought the context back under the threshold leaves later pauses on
// (run.go's makeRoom, `err != nil || s.full(...)`).
func TestToolLoopPausesAgain(t *testing.T) {
	call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "dump", Arguments: []byte(`{}`)}
	p := &bySystem{main: &fake{steps: []step{
		{text: "dumping", calls: []llm.Content{call}},
		{text: "dumping again", calls: []llm.Content{call}},
		{text: "done"},
	}}, summaries: &fake{}}
	s, rec, stop := newWith(t, p, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1800},
		Tools: []tool.Tool{bigOutput{}}, Resume: &journal.Loaded{Messages: history(3)}, Compaction: small})
	if err := s.Prompt(t.Context(), "dump twice", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	var reasons []string
	for _, e := range of[CompactionEndEvent](rec) {
		reasons = append(reasons, string(e.Reason)+"/"+e.ErrorMessage)
	}
	if strings.Join(reasons, " ") != "threshold/ threshold/" || p.main.calls() != 3 {
		t.Errorf("compactions %q before %d calls; want two pauses, each compacting", reasons, p.main.calls())
	}
	if last := llm.EstimateTokens(p.main.request(2).Messages); last > 1800*85/100 {
		t.Errorf("the last call sent about %d tokens, past the threshold of the 1,800-token window", last)
	}
}

// noUsage is a provider whose answers report no usage, as some
// OpenAI-compatible servers stream them.
type noUsage struct{ calls int }

func (p *noUsage) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	p.calls++
	done := false
	fill := func(b *llm.Builder) error {
		if done {
			return io.EOF
		}
		done = true
		b.Text("0", "an answer")
		b.Finish(llm.Stop)
		return nil
	}
	return llm.NewStream(llm.Message{Role: llm.Assistant, Provider: "p", Model: "m", Timestamp: llm.Now()}, fill, nil), nil
}

// TestAnswerWithoutUsage: after an answer that reported no usage, the
// check for compaction after the run looks back past it (run.go's
// afterSuccess, `i--`): the prompt ends well, no compaction runs, and the
// session takes the next prompt.
func TestAnswerWithoutUsage(t *testing.T) {
	p := &noUsage{}
	s, rec, stop := newWith(t, p, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 100000}})
	for _, text := range []string{"one", "two"} {
		if err := s.Prompt(t.Context(), text, PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := len(of[CompactionStartEvent](rec)); n != 0 || p.calls != 2 || len(s.Messages()) != 4 {
		t.Errorf("%d compactions, %d calls, %d messages; want none, 2 and 4", n, p.calls, len(s.Messages()))
	}
}

// gated is f with one call held before it starts until gate closes, so
// a test can act while that call is under way.
type gated struct {
	*fake
	at      int // the call held, 0-based
	gate    chan struct{}
	entered chan struct{}
}

func (g *gated) Stream(ctx context.Context, req *llm.Request) (*llm.Stream, error) {
	if g.calls() == g.at {
		close(g.entered)
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.fake.Stream(ctx, req)
}

// abortDuring runs a prompt over steps, calls AbortRetry while call at is
// under way, then lets that call go on; it returns the prompt's error and
// the calls made.
func abortDuring(t *testing.T, at int, steps ...step) (int, error) {
	g := &gated{fake: &fake{steps: steps}, at: at, gate: make(chan struct{}), entered: make(chan struct{})}
	s, _, stop := newWith(t, g, Config{Model: llm.Model{ID: "m", Provider: "fake", ContextWindow: 100000}})
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Prompt(context.Background(), "hi", PromptOptions{}) }()
	<-g.entered
	s.AbortRetry()
	close(g.gate)
	err := <-done
	return g.calls(), err
}

// TestAbortRetryOnlyStopsARetry: AbortRetry while a retried call runs
// lets that call end but retries no further; while the first call runs
// (no retry yet) it does nothing, and a later failure is retried as
// usual (session.go `s.running && s.attempt > 0`).
func TestAbortRetryOnlyStopsARetry(t *testing.T) {
	t.Run("during the retried call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls, err := abortDuring(t, 1, step{err: overloaded()}, step{err: overloaded()}, step{text: "too late"})
			var api *llm.APIError
			if !errors.As(err, &api) || calls != 2 {
				t.Errorf("err %v after %d calls, want the overload after 2 (no retry after AbortRetry)", err, calls)
			}
		})
	})
	t.Run("before any retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls, err := abortDuring(t, 0, step{err: overloaded()}, step{text: "fine"})
			if err != nil || calls != 2 {
				t.Errorf("err %v after %d calls, want the overload retried once and answered", err, calls)
			}
		})
	})
}

// TestOverflowWithoutWindowKeepsTheLearned: an overflow that states no
// window leaves the window an earlier overflow taught (window.go's learn,
// `rep.Window <= 0`).
func TestOverflowWithoutWindowKeepsTheLearned(t *testing.T) {
	main := &fake{steps: []step{{err: statedOverflow(3000, 3400)}, {text: "answer"}, {err: plainOverflow()}}}
	s, _, stop := newWith(t, &bySystem{main: main, summaries: &fake{}}, Config{Model: llm.Model{ID: "qwen", Provider: "local", ContextWindow: 128000},
		Resume: &journal.Loaded{Messages: history(12)}})
	defer stop()
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil || s.State().Model.ContextWindow != 3000 {
		t.Fatalf("err %v, window %d; want the window 3000 learned", err, s.State().Model.ContextWindow)
	}
	_ = s.Prompt(t.Context(), "and again", PromptOptions{}) // its overflow may not be recoverable; the window is what counts
	if got := s.State().Model.ContextWindow; got != 3000 {
		t.Errorf("window %d after an overflow stating none, want the learned 3000", got)
	}
}

// TestAddedAnswerCountsBeforeThePrompt: an answer added with AddContext
// that carries the provider's count is measured by that count before the
// prompt goes (window.go's need joins next when it holds a count): 900
// counted of a 1,000-token window compacts first.
func TestAddedAnswerCountsBeforeThePrompt(t *testing.T) {
	f := &fake{steps: []step{{text: "the summary"}, {text: "answer"}}}
	s, rec, stop := newSession(t, f, Config{Model: llm.Model{ID: "m", Provider: "p", ContextWindow: 1000},
		Resume: &journal.Loaded{Messages: history(2)}, Compaction: small})
	counted := answer("counted elsewhere")
	counted.Timestamp, counted.Usage = llm.Now(), &llm.Usage{Input: 890, Output: 10}
	s.AddContext(counted)
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := len(of[CompactionStartEvent](rec)); n != 1 || f.request(0).System != summaryPrompt {
		t.Errorf("%d compactions, first call's system %.20q; want the context compacted before the prompt", n, f.request(0).System)
	}
}
