package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

// compactionOrder is the prompt's agent_end, compaction and settle events
// in order, with willRetry where they carry it.
func compactionOrder(rec *recorder) string {
	var order []string
	for _, e := range rec.events {
		switch e := e.(type) {
		case AgentEndEvent:
			order = append(order, fmt.Sprintf("%s(willRetry=%v)", e.Kind(), e.WillRetry))
		case CompactionEndEvent:
			order = append(order, fmt.Sprintf("%s(willRetry=%v)", e.Kind(), e.WillRetry))
		case CompactionStartEvent, AgentSettledEvent, AutoRetryStartEvent, AutoRetryEndEvent:
			order = append(order, string(e.Kind()))
		}
	}
	return strings.Join(order, " ")
}

// TestOverflowAgainEndsPrompt: when the retried request after the
// overflow compaction overflows again, the prompt ends as pi ends it: a
// last compaction_end{willRetry:false} with pi's words, no second
// compaction and no further request; the error names both numbers.
func TestOverflowAgainEndsPrompt(t *testing.T) {
	f := &fake{steps: []step{{err: overflowErr()}, {text: "summary"}, {err: overflowErr()}, {text: "never a second summary"}, {text: "never"}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
	err := s.Prompt(t.Context(), "next", PromptOptions{})
	stop()
	if !errors.Is(err, ErrStillOverflows) || f.calls() != 3 {
		t.Fatalf("err %v after %d calls, want ErrStillOverflows after 3 (overflow, summary, overflow)", err, f.calls())
	}
	for _, want := range []string{"even after compaction", "210000 tokens", "window of 100000 tokens"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	want := "agent_end(willRetry=true) compaction_start compaction_end(willRetry=true) agent_end(willRetry=false) compaction_end(willRetry=false) agent_settled"
	if got := compactionOrder(rec); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	ends := of[CompactionEndEvent](rec)
	if last := ends[len(ends)-1]; last.Reason != ReasonOverflow || last.ErrorMessage != OverflowRecoveryFailed || last.Result != nil || last.Aborted {
		t.Errorf("last compaction_end %+v, want reason overflow and pi's %q", last, OverflowRecoveryFailed)
	}
}

// TestSmallerKeepInOneCompaction: when the first summary leaves the
// context too large by the estimate, the same operation summarises again
// keeping less, before the retried request: one compaction_start and one
// compaction_end, two summary requests, then the answer.
func TestSmallerKeepInOneCompaction(t *testing.T) {
	// An overflow that states no numbers, so nothing is calibrated, and a
	// first summary that alone takes most of the window.
	overflow := apiErr(400, `{"error":{"message":"This model's maximum context length was exceeded.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	f := &fake{steps: []step{{err: overflow}, {text: strings.Repeat("long summary ", 1100)}, {text: "short summary"}, {text: "short summary"}, {text: "short summary"}, {text: "answer"}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(8)}, Compaction: CompactionConfig{KeepRecentTokens: 600},
		Model: llm.Model{ID: "m", Provider: "fake", ContextWindow: 4000}})
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	want := "agent_end(willRetry=true) compaction_start compaction_end(willRetry=true) agent_end(willRetry=false) agent_settled"
	if got := compactionOrder(rec); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	// Between the overflow and the answer, only summary requests: the
	// first, then those of the smaller keep, which carry the first summary.
	n := f.calls()
	carried := false
	for i := 1; i < n-1; i++ {
		req := f.request(i)
		if req.System != summaryPrompt {
			t.Fatalf("request %d of %d is not a summary request", i, n)
		}
		carried = carried || i > 1 && strings.Contains(req.Messages[0].TextOf(), "long summary")
	}
	if n < 4 || !carried {
		t.Errorf("%d calls, first summary carried on: %v; want a second summary of the first", n, carried)
	}
	sent := f.request(n - 1).Messages
	if f.request(n-1).System == summaryPrompt || !strings.Contains(sent[0].TextOf(), "short summary") || len(sent) >= 2*8 {
		t.Errorf("retried request: %d messages starting %.80q", len(sent), sent[0].TextOf())
	}
	if res := of[CompactionEndEvent](rec)[0].Result; res == nil || res.Summary != "short summary" || res.TokensBefore < 1600 {
		t.Errorf("compaction_end result %+v, want the last summary and the size before the operation", res)
	}
}

// TestNoSummaryOfASummary: a context whose older part is only an earlier
// summary has nothing to compact; no summary request is made.
func TestNoSummaryOfASummary(t *testing.T) {
	ctx := []llm.Message{
		{Role: llm.User, Content: []llm.Content{llm.Text(journal.SummaryText("what happened before"))}},
		{Role: llm.User, Content: []llm.Content{llm.Text("the last question")}},
	}
	f := &fake{}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: ctx}})
	_, err := s.Compact(t.Context())
	stop()
	if !errors.Is(err, ErrNothingToCompact) || f.calls() != 0 {
		t.Fatalf("err %v after %d calls, want ErrNothingToCompact and no call", err, f.calls())
	}
	if n := len(of[CompactionStartEvent](rec)); n != 1 {
		t.Errorf("%d compaction_start, want 1", n)
	}
}

// TestThresholdSmallerKeepInOneCompaction: the compaction before a call
// that passes the threshold is one operation too, the smaller keep inside
// it, and the call follows it.
func TestThresholdSmallerKeepInOneCompaction(t *testing.T) {
	f := &fake{steps: []step{{text: strings.Repeat("long summary ", 1500)}, {text: "short summary"}, {text: "answer"}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(36)}, Compaction: CompactionConfig{KeepRecentTokens: 3200},
		Model: llm.Model{ID: "m", Provider: "fake", ContextWindow: 8000}})
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	want := "compaction_start compaction_end(willRetry=false) agent_end(willRetry=false) agent_settled"
	if got := compactionOrder(rec); got != want || f.calls() != 3 {
		t.Fatalf("%d calls, events %s\nwant 3 calls, %s", f.calls(), got, want)
	}
	if ends := of[CompactionEndEvent](rec); ends[0].Reason != ReasonThreshold || ends[0].ErrorMessage != "" || ends[0].Result.Summary != "short summary" {
		t.Errorf("compaction_end %+v", ends[0])
	}
	if in := f.request(1).Messages[0].TextOf(); !strings.Contains(in, "long summary") {
		t.Errorf("second summary request does not carry the first summary: %.200q", in)
	}
}
