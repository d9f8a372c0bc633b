package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

func overflowErr() error {
	return apiErr(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)
}

// history is n earlier exchanges, long enough that a small keep budget
// leaves an older part to summarise.
func history(n int) []llm.Message {
	var ms []llm.Message
	for i := range n {
		ms = append(ms,
			llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(strings.Repeat("question ", 50) + llm.Key(i))}},
			llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(strings.Repeat("answer ", 50))}})
	}
	return ms
}

// small keeps about two exchanges whole.
var small = CompactionConfig{KeepRecentTokens: 250}

func TestOverflowCompactsAndContinues(t *testing.T) {
	// Persist the history first, as a resumed session would have it.
	j, resume := persisted(t, history(6))
	f := &fake{steps: []step{{err: overflowErr()}, {text: "## Goal\nkeep going"}, {text: "answer after compaction"}}}
	s, rec, stop := newSession(t, f, Config{Resume: resume, Store: j, Compaction: small})
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	var order []string
	for _, typ := range rec.types() {
		switch EventType(typ) {
		case AgentEnd, CompactionStart, CompactionEnd, AgentSettled, AutoRetryStart, AutoRetryEnd:
			order = append(order, typ)
		}
	}
	want := []string{string(AgentEnd), string(CompactionStart), string(CompactionEnd), string(AgentEnd), string(AgentSettled)}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", order, want)
	}
	ends := of[CompactionEndEvent](rec)
	res := ends[0].Result
	if ends[0].Reason != ReasonOverflow || !ends[0].WillRetry || ends[0].Aborted || res == nil || res.FirstKeptEntryID == "" || res.TokensBefore == 0 {
		t.Errorf("compaction_end %+v result %+v", ends[0], res)
	}
	if ae := of[AgentEndEvent](rec); !ae[0].WillRetry || ae[1].WillRetry {
		t.Errorf("agent_end willRetry %v %v", ae[0].WillRetry, ae[1].WillRetry)
	}
	// The call after compaction sends the summary and the kept tail only.
	sent := f.request(2).Messages
	if !strings.Contains(sent[0].TextOf(), "keep going") || len(sent) >= len(resume.Messages)+1 {
		t.Errorf("context after compaction: %d messages, first %q", len(sent), sent[0].TextOf())
	}
	// The summary call saw the older part, not the kept one.
	if sys := f.request(1).System; !strings.Contains(sys, "## Goal") {
		t.Errorf("summary call system prompt %q", sys)
	}
	// Resume: the file loads as summary + kept messages + the new turn.
	j.Close()
	loaded, err := journal.Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loaded.Messages[0].TextOf(), "keep going") {
		t.Errorf("resumed context starts with %q", loaded.Messages[0].TextOf())
	}
	last := loaded.Messages[len(loaded.Messages)-1]
	if last.TextOf() != "answer after compaction" || len(loaded.Messages) != len(sent)+1 {
		t.Errorf("resumed %d messages ending %q; want the %d sent plus the answer", len(loaded.Messages), last.TextOf(), len(sent))
	}
}

func TestSummaryCallRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overflowErr()}, {err: overloaded()}, {text: "summary"}, {text: "answer"}}}
		s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
		start := time.Now()
		if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if f.calls() != 4 || time.Since(start) != 2*time.Second {
			t.Errorf("%d calls in %v, want 4 with one 2s backoff", f.calls(), time.Since(start))
		}
		if n := len(of[AutoRetryStartEvent](rec)); n != 0 {
			t.Errorf("%d auto_retry_start for the summary call", n)
		}
	})
}

func TestAbortDuringCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overflowErr()}, {text: "half a summ", block: true}}}
		s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
		done := make(chan error)
		go func() { done <- s.Prompt(context.Background(), "next", PromptOptions{}) }()
		synctest.Wait()
		if !s.State().Compacting {
			t.Fatalf("not compacting: %+v", s.State())
		}
		s.Abort()
		err := <-done
		stop()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v", err)
		}
		ends := of[CompactionEndEvent](rec)
		if len(ends) != 1 || !ends[0].Aborted || ends[0].WillRetry {
			t.Errorf("compaction_end %+v", ends)
		}
		// Nothing replaced the failed answer: it is the prompt's last
		// message, as after a cancelled retry wait (never sent again).
		ms := s.Messages()
		if last := ms[len(ms)-1]; len(ms) != 14 || last.StopReason != llm.Error {
			t.Errorf("context has %d messages ending %s after an aborted compaction, want the 12, the prompt and the failed answer", len(ms), last.StopReason)
		}
	})
}

func TestThresholdCompaction(t *testing.T) {
	// The context with the prompt is far below the threshold before the
	// call; the answer's usage is above it, so compaction runs after.
	f := &fake{steps: []step{{text: "big answer", usage: &llm.Usage{Input: 900, Output: 50}}, {text: "summary of it all"}}}
	s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(1)}, Compaction: small,
		Model: llm.Model{ID: "m", ContextWindow: 1000}})
	s.cfg.Compaction.ThresholdPercent = 50
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	ends := of[CompactionEndEvent](rec)
	if len(ends) != 1 || ends[0].Reason != ReasonThreshold || ends[0].WillRetry || f.calls() != 2 {
		t.Fatalf("compaction_end %+v after %d calls", ends, f.calls())
	}
	if first := s.Messages()[0].TextOf(); !strings.Contains(first, "summary of it all") {
		t.Errorf("context starts with %q", first)
	}
	types := rec.types()
	if types[len(types)-1] != string(AgentSettled) {
		t.Errorf("agent_settled is not last: %v", types[len(types)-3:])
	}
}

func TestManualCompact(t *testing.T) {
	f := &fake{steps: []step{{text: "summary"}}}
	s, _, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}, Compaction: small})
	defer stop()
	res, err := s.Compact(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || res.Summary != "summary" || res.TokensBefore == 0 || res.FirstKeptEntryID != "" {
		t.Errorf("Compact returned %+v", res)
	}
	if n := len(s.Messages()); n >= 12 {
		t.Errorf("%d messages after compaction", n)
	}
	s2, _, stop2 := newSession(t, &fake{}, Config{Resume: &journal.Loaded{Messages: history(1)[:1]}, Compaction: small})
	defer stop2()
	if _, err := s2.Compact(t.Context()); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("err %v, want ErrNothingToCompact", err)
	}
}

// TestOverflowCompactionFails: when the overflow compaction cannot help
// (a first prompt has nothing older to summarise; even a second one
// leaves too much) or fails (the summary call is refused), the client is
// told after agent_end{willRetry:true} by a last compaction_end carrying
// the error and willRetry:false, and the failed answer stays the
// prompt's final state: it is not filed as retried, so the resumed
// context is the live one.
func TestOverflowCompactionFails(t *testing.T) {
	// Every summary is far larger than the window, in however many pieces.
	huge := []step{{err: overflowErr()}}
	for range 20 {
		huge = append(huge, step{text: strings.Repeat("a summary far larger than the window ", 200)})
	}
	once := "agent_end(willRetry=true) compaction_start compaction_end(willRetry=false) agent_settled"
	for _, tc := range []struct {
		name    string
		history []llm.Message
		window  int
		steps   []step
		events  string
		want    string // in the last compaction_end's errorMessage and Prompt's error
	}{
		{"nothing to compact", nil, 100000, []step{{err: overflowErr()}}, once, "nothing to compact"},
		{"summary refused", history(6), 100000, []step{{err: overflowErr()}, {err: badKey()}}, once, "Incorrect API key"},
		{"too large even with the smaller keep", history(2), 1000, huge, once, "even after compaction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, resume := persisted(t, tc.history)
			f := &fake{steps: tc.steps}
			s, rec, stop := newSession(t, f, Config{Resume: resume, Store: j, Compaction: small,
				Model: llm.Model{ID: "m", Provider: "fake", ContextWindow: tc.window}})
			err := s.Prompt(t.Context(), "next", PromptOptions{})
			stop()
			if !errors.Is(err, ErrContextOverflow) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a context overflow saying %q", err, tc.want)
			}
			if got := compactionOrder(rec); got != tc.events {
				t.Errorf("events %s\nwant   %s", got, tc.events)
			}
			ends := of[CompactionEndEvent](rec)
			if e := ends[len(ends)-1]; e.Aborted || !strings.Contains(e.ErrorMessage, tc.want) {
				t.Errorf("last compaction_end aborted %v errorMessage %q, want an error saying %q", e.Aborted, e.ErrorMessage, tc.want)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			loaded, err := journal.Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range loaded.Entries {
				if en.Type == "message" && en.Retried {
					t.Errorf("line %d: %s %s filed as retried, but no retry replaced it", en.Line, en.Message.Role, en.Message.StopReason)
				}
			}
			if live, file := jsonOf(t, s.Messages()), jsonOf(t, loaded.Messages); live != file {
				t.Errorf("resumed context differs from the live one:\n file: %.400s\n live: %.400s", file, live)
			}
		})
	}
}

// stampStore is a journal whose compaction append returns only once the
// clock has moved on to the next millisecond, so a timestamp taken after
// it cannot equal the entry's.
type stampStore struct{ *journal.Journal }

func (s stampStore) AppendCompaction(summary, firstKeptID string, tokensBefore int, at time.Time) error {
	err := s.Journal.AppendCompaction(summary, firstKeptID, tokensBefore, at)
	for t := time.Now().UnixMilli(); time.Now().UnixMilli() <= t; {
		time.Sleep(100 * time.Microsecond)
	}
	return err
}

// TestCompactionResumesAsLive: after an overflow compaction the session
// file loads as exactly the context the session holds, the summary's
// timestamp included.
func TestCompactionResumesAsLive(t *testing.T) {
	j, resume := persisted(t, history(6))
	f := &fake{steps: []step{{err: overflowErr()}, {text: "## Goal\nkeep going"}, {text: "answer"}}}
	s, _, stop := newSession(t, f, Config{Resume: resume, Store: stampStore{j}, Compaction: small})
	if err := s.Prompt(t.Context(), "next", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	loaded, err := journal.Load(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	live := s.Messages()
	if !strings.Contains(live[0].TextOf(), "keep going") || live[0].Timestamp != loaded.Messages[0].Timestamp {
		t.Errorf("summary %q at %d live, %d on file", live[0].TextOf(), live[0].Timestamp, loaded.Messages[0].Timestamp)
	}
	if a, b := jsonOf(t, live), jsonOf(t, loaded.Messages); a != b {
		t.Errorf("resumed context differs from the live one:\n file: %.400s\n live: %.400s", b, a)
	}
}

// persisted writes hist to a new session file and returns it with the
// resume state a reopened session would have.
func persisted(t *testing.T, hist []llm.Message) (*journal.Journal, *journal.Loaded) {
	t.Helper()
	j, err := journal.Create(t.TempDir(), "/w")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range hist {
		id, err := j.AppendMessage(m, false)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return j, &journal.Loaded{Messages: hist, IDs: ids}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
