package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session/journal"
)

// Rule 1: a transient error then success; the waits are 2000/4000/8000 ms.
func TestTransientThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}, {err: unavailable()}, {err: overloaded()}, {text: "hello"}}}
		s, rec, stop := newSession(t, f, Config{})
		start := time.Now()
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if got := time.Since(start); got != 14*time.Second {
			t.Errorf("prompt took %v of fake time, want 2s+4s+8s", got)
		}
		if f.calls() != 4 {
			t.Errorf("%d model calls, want 4", f.calls())
		}
		starts := of[AutoRetryStartEvent](rec)
		if len(starts) != 3 {
			t.Fatalf("%d auto_retry_start, want 3", len(starts))
		}
		for i, want := range []int64{2000, 4000, 8000} {
			st := starts[i]
			if st.Attempt != i+1 || st.MaxAttempts != 3 || st.DelayMs != want || st.ErrorMessage == "" || st.ErrorClass != retry.Transient {
				t.Errorf("start %d: %+v", i, st)
			}
		}
		ends := of[AutoRetryEndEvent](rec)
		if len(ends) != 1 || !ends[0].Success || ends[0].Attempt != 3 {
			t.Errorf("auto_retry_end %+v, want one success at attempt 3", ends)
		}
		// Exactly one transient failure then success reports attempt 1.
		f2 := &fake{steps: []step{{err: overloaded()}, {text: "ok"}}}
		s2, rec2, stop2 := newSession(t, f2, Config{})
		if err := s2.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop2()
		if st := of[AutoRetryStartEvent](rec2); len(st) != 1 || st[0].Attempt != 1 || st[0].DelayMs != 2000 {
			t.Errorf("start %+v", st)
		}
		if e := of[AutoRetryEndEvent](rec2); len(e) != 1 || !e[0].Success || e[0].Attempt != 1 {
			t.Errorf("end %+v", e)
		}
	})
}

// Rule 2: exhausted.
func TestExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}, {err: overloaded()}, {err: overloaded()}, {err: overloaded()}, {text: "never"}}}
		s, rec, stop := newSession(t, f, Config{})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		var re *RunError
		if !errors.As(err, &re) || re.Retries != 3 || re.Class != retry.Transient {
			t.Fatalf("err %v, want RunError after 3 retries", err)
		}
		if !strings.Contains(err.Error(), "retry failed after 4 calls (3 retries)") {
			t.Errorf("message %q", err)
		}
		if f.calls() != 4 {
			t.Errorf("%d calls, want 4", f.calls())
		}
		if n := len(of[AutoRetryStartEvent](rec)); n != 3 {
			t.Errorf("%d starts, want 3", n)
		}
		ends := of[AutoRetryEndEvent](rec)
		if len(ends) != 1 || ends[0].Success || ends[0].Attempt != 3 || ends[0].FinalError == "" {
			t.Errorf("end %+v", ends)
		}
	})
}

// Rule 3: fatal errors never retry; overflow goes to the compaction hook.
func TestFatalAndOverflow(t *testing.T) {
	for name, e := range map[string]error{
		"401": badKey(),
		"400": apiErr(400, `{"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error"}}`),
		"404": apiErr(404, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","code":"model_not_found"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			f := &fake{steps: []step{{err: e}}}
			s, rec, stop := newSession(t, f, Config{})
			err := s.Prompt(t.Context(), "hi", PromptOptions{})
			stop()
			var re *RunError
			if !errors.As(err, &re) || re.Class != retry.Fatal || f.calls() != 1 {
				t.Fatalf("err %v after %d calls", err, f.calls())
			}
			if n := len(of[AutoRetryStartEvent](rec)) + len(of[AutoRetryEndEvent](rec)); n != 0 {
				t.Errorf("%d retry events", n)
			}
		})
	}
	t.Run("overflow goes to compaction", func(t *testing.T) {
		f := &fake{steps: []step{{err: overflowErr()}, {text: "## Goal\nsummary"}, {text: "answer"}}}
		s, rec, stop := newSession(t, f, Config{Resume: &journal.Loaded{Messages: history(6)}})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		if err != nil || f.calls() != 3 {
			t.Fatalf("err %v after %d calls, want success after overflow, summary, answer", err, f.calls())
		}
		if n := len(of[AutoRetryStartEvent](rec)) + len(of[AutoRetryEndEvent](rec)); n != 0 {
			t.Errorf("%d retry events for an overflow", n)
		}
		if n := len(of[CompactionEndEvent](rec)); n != 1 {
			t.Errorf("%d compaction_end events", n)
		}
	})
	t.Run("overflow without compaction", func(t *testing.T) {
		f := &fake{steps: []step{{err: overflowErr()}}}
		s, _, stop := newSession(t, f, Config{NoAutoCompaction: true, Resume: &journal.Loaded{Messages: history(6)}})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		if !errors.Is(err, ErrContextOverflow) || f.calls() != 1 {
			t.Fatalf("err %v after %d calls, want ErrContextOverflow at once", err, f.calls())
		}
	})
}

// Rule 4: retry disabled and maxRetries 0 behave as no retry.
func TestNoRetryConfigs(t *testing.T) {
	for name, p := range map[string]retry.Policy{
		"disabled":       {Disabled: true, MaxRetries: 3},
		"max retries 0":  {},
		"auto-retry off": retry.Default(),
	} {
		t.Run(name, func(t *testing.T) {
			f := &fake{steps: []step{{err: overloaded()}, {text: "never"}}}
			s, rec, stop := newSession(t, f, Config{Retry: p.For})
			if name == "auto-retry off" {
				s.SetAutoRetryEnabled(false)
			}
			err := s.Prompt(t.Context(), "hi", PromptOptions{})
			stop()
			if err == nil || f.calls() != 1 || len(of[AutoRetryStartEvent](rec)) != 0 {
				t.Fatalf("err %v, %d calls, %d starts", err, f.calls(), len(of[AutoRetryStartEvent](rec)))
			}
		})
	}
}

// Rule 5: a long hint is waited in full; one above maxDelayMs fails fast.
func TestHints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: apiErr(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "retry-after", "30")}, {text: "ok"}}}
		s, rec, stop := newSession(t, f, Config{})
		start := time.Now()
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("waited %v, want the 30s the server asked for", d)
		}
		if st := of[AutoRetryStartEvent](rec); len(st) != 1 || st[0].DelayMs != 30000 {
			t.Errorf("starts %+v", st)
		}
	})
	// A 50-minute hint is a transient wait too long to sleep; one of hours
	// is a usage limit (retry.LongWait): both fail at once, naming the wait.
	for _, tt := range []struct{ retryAfter, want string }{
		{"3000", "provider asked for 50m0s, longer than maxDelayMs 1m0s"},
		{"18000", "(in 5h0m), longer than maxDelayMs 1m0s"},
	} {
		t.Run("retry-after "+tt.retryAfter, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{steps: []step{{err: apiErr(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "retry-after", tt.retryAfter)}, {text: "never"}}}
				s, rec, stop := newSession(t, f, Config{})
				start := time.Now()
				err := s.Prompt(t.Context(), "hi", PromptOptions{})
				stop()
				if time.Since(start) != 0 || f.calls() != 1 {
					t.Errorf("took %v and %d calls; want an immediate failure", time.Since(start), f.calls())
				}
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err %v, want it to name the requested wait", err)
				}
				if n := len(of[AutoRetryStartEvent](rec)); n != 0 {
					t.Errorf("%d starts", n)
				}
			})
		})
	}
}

// Rule 6: AbortRetry and Abort during the wait; Abort during a stream.
func TestAbort(t *testing.T) {
	// Turning auto-retry off during the wait cancels it the same way:
	// at once, not when the wait would have ended.
	cancels := []struct {
		name   string
		cancel func(*Session)
	}{
		{"abort retry during wait", (*Session).AbortRetry},
		{"auto-retry off during wait", func(s *Session) { s.SetAutoRetryEnabled(false) }},
	}
	for _, c := range cancels {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{steps: []step{{err: overloaded()}, {text: "never"}}}
				s, rec, stop := newSession(t, f, Config{})
				done := make(chan error)
				go func() { done <- s.Prompt(context.Background(), "hi", PromptOptions{}) }()
				synctest.Wait()
				if !s.IsRetrying() || s.State().RetryAttempt != 1 {
					t.Fatalf("state %+v, want retrying at attempt 1", s.State())
				}
				start := time.Now()
				c.cancel(s)
				err := <-done
				if time.Since(start) != 0 {
					t.Errorf("abort took %v of fake time", time.Since(start))
				}
				stop()
				if !errors.Is(err, ErrRetryCancelled) || f.calls() != 1 {
					t.Errorf("err %v, calls %d", err, f.calls())
				}
				ends := of[AutoRetryEndEvent](rec)
				if len(ends) != 1 || ends[0].Success || ends[0].FinalError != RetryCancelled || ends[0].Attempt != 1 {
					t.Errorf("end %+v", ends)
				}
				if s.State().RetryAttempt != 0 || s.IsRetrying() {
					t.Errorf("counter not reset: %+v", s.State())
				}
			})
		})
	}
	t.Run("abort during wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{steps: []step{{err: overloaded()}, {text: "never"}}}
			s, rec, stop := newSession(t, f, Config{})
			done := make(chan error)
			go func() { done <- s.Prompt(context.Background(), "hi", PromptOptions{}) }()
			synctest.Wait()
			s.Abort()
			err := <-done
			stop()
			if !errors.Is(err, context.Canceled) || f.calls() != 1 {
				t.Errorf("err %v, calls %d", err, f.calls())
			}
			if ends := of[AutoRetryEndEvent](rec); len(ends) != 1 || ends[0].FinalError != RetryCancelled {
				t.Errorf("end %+v", ends)
			}
		})
	})
	t.Run("abort during stream", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{steps: []step{{text: "partial", block: true}, {text: "never"}}}
			s, rec, stop := newSession(t, f, Config{})
			done := make(chan error)
			go func() { done <- s.Prompt(context.Background(), "hi", PromptOptions{}) }()
			synctest.Wait()
			s.Abort()
			err := <-done
			stop()
			if !errors.Is(err, context.Canceled) || f.calls() != 1 {
				t.Errorf("err %v, calls %d", err, f.calls())
			}
			ends := of[MessageEndEvent](rec)
			last := ends[len(ends)-1].Message
			if last.StopReason != llm.Aborted {
				t.Errorf("last message stop reason %q, want aborted", last.StopReason)
			}
			if n := len(of[AutoRetryStartEvent](rec)); n != 0 {
				t.Errorf("%d retries after abort", n)
			}
		})
	})
}

// Rule 7: Prompt waits for the chain even with slow subscribers, and emits
// agent_settled exactly once after everything.
func TestPromptWaitsForChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}, {text: "ok"}}}
		s, rec, stop := newSession(t, f, Config{})
		slow := s.Subscribe(func(Event) { time.Sleep(time.Second) })
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if s.IsRetrying() || s.State().Streaming {
			t.Errorf("state after Prompt: %+v", s.State())
		}
		slow()
		stop()
		types := rec.types()
		if types[len(types)-1] != string(AgentSettled) || len(of[AgentSettledEvent](rec)) != 1 {
			t.Errorf("events end %v", types[len(types)-3:])
		}
		ends := of[AgentEndEvent](rec)
		if len(ends) != 2 || !ends[0].WillRetry || ends[1].WillRetry {
			t.Errorf("agent_end willRetry: %+v", ends)
		}
	})
}

// Rule 8: tools already run are never run again; the retried call carries
// the tool results and not the failed message.
func TestToolsRunOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &counter{}
		call := llm.Content{Type: llm.ToolCallType, ID: "call_1", Name: "count", Arguments: []byte(`{}`)}
		f := &fake{steps: []step{{text: "let me count", calls: []llm.Content{call}}, {text: "half", midErr: unavailable()}, {text: "counted once"}}}
		s, rec, stop := newSession(t, f, Config{Tools: nil})
		s.cfg.Tools = append(s.cfg.Tools, c)
		if err := s.Prompt(t.Context(), "count", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if c.n != 1 {
			t.Errorf("tool ran %d times", c.n)
		}
		retried := f.request(2).Messages
		last := retried[len(retried)-1]
		if last.Role != llm.ToolResult || last.ToolCallID != "call_1" {
			t.Errorf("retried context ends with %+v, want the tool result", last)
		}
		for _, m := range retried {
			if m.StopReason == llm.Error {
				t.Errorf("failed message sent again: %+v", m)
			}
		}
		if n := len(of[MessageDiscardedEvent](rec)); n != 1 {
			t.Errorf("%d message_discarded, want 1", n)
		}
		if got := s.State().MessageCount; got != 4 {
			t.Errorf("message count %d, want 4 (user, assistant, tool result, assistant)", got)
		}
	})
}

// Rule 9: the counter resets on success and at each prompt.
func TestCounterResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}, {text: "ok"}, {err: overloaded()}, {text: "ok again"}}}
		s, rec, stop := newSession(t, f, Config{})
		for range 2 {
			if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		stop()
		starts := of[AutoRetryStartEvent](rec)
		if len(starts) != 2 || starts[0].Attempt != 1 || starts[1].Attempt != 1 || starts[1].DelayMs != 2000 {
			t.Errorf("starts %+v", starts)
		}
	})
}

// Rule 10: mid-stream drops under both streaming modes.
func TestStreamingModes(t *testing.T) {
	drop := func() error { return apiErr(0, "stream dropped", "") }
	_ = drop
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "partial answer", midErr: llm.ErrTruncated}, {text: "full answer"}}}
		s, rec, stop := newSession(t, f, Config{})
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		d := of[MessageDiscardedEvent](rec)
		if len(d) != 1 || d[0].Message.TextOf() != "partial answer" {
			t.Errorf("discarded %+v", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "partial answer", midErr: llm.ErrTruncated}, {text: "never"}}}
		s, _, stop := newSession(t, f, Config{Retry: retry.Policy{MaxRetries: 3, BeforeOutput: true}.For})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		if err == nil || f.calls() != 1 {
			t.Errorf("beforeOutput after output: err %v, calls %d", err, f.calls())
		}
	})
	// Nobody saw the partial (print mode into a pipe): it may be retried.
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "partial answer", midErr: llm.ErrTruncated}, {text: "full answer"}}}
		s, _, stop := newSession(t, f, Config{Retry: retry.Policy{MaxRetries: 3, BeforeOutput: true}.For, PartialsHidden: true})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		if err != nil || f.calls() != 2 {
			t.Errorf("beforeOutput, output nobody saw: err %v, calls %d", err, f.calls())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{midErr: llm.ErrTruncated}, {text: "answer"}}}
		s, _, stop := newSession(t, f, Config{Retry: retry.Policy{MaxRetries: 3, BeforeOutput: true}.For})
		err := s.Prompt(t.Context(), "hi", PromptOptions{})
		stop()
		if err != nil || f.calls() != 2 {
			t.Errorf("beforeOutput before output: err %v, calls %d", err, f.calls())
		}
	})
}
