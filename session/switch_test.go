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
)

// froms is a Switcher that records which client each failed call used
// and hands out the next target of its list.
type froms struct {
	got     []llm.Provider
	refs    []string
	reports []retry.Report
	targets []llm.Target
}

func (f *froms) Switch(_ context.Context, from llm.Target, r retry.Report) (llm.Target, bool) {
	f.got = append(f.got, from.Provider)
	f.refs = append(f.refs, from.Ref)
	f.reports = append(f.reports, r)
	if len(f.targets) == 0 {
		return llm.Target{}, false
	}
	t := f.targets[0]
	f.targets = f.targets[1:]
	return t, true
}

func usageLimit() error {
	return apiErr(429, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`, "retry-after", "18000")
}

// TestSwitchSeesFailedClient: the Switcher learns the client of the failed call, even
// when SetModel replaced the one it handed out; and when it has nothing
// left, the prompt fails at once naming the reset time.
func TestSwitchSeesFailedClient(t *testing.T) {
	first := &fake{steps: []step{{text: "never called"}}}
	set := &fake{steps: []step{{err: usageLimit()}}}
	second := &fake{steps: []step{{err: usageLimit()}}}
	sw := &froms{targets: []llm.Target{{Provider: second, Model: llm.Model{ID: "m2", Provider: "fake"}, Name: "b", Ref: "ref-b"}}}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	s, rec, stop := newSession(t, first, Config{Switcher: sw, Now: func() time.Time { return now }})
	s.SetModel(llm.Target{Provider: set, Model: llm.Model{ID: "m", Provider: "fake"}, Ref: "ref-set"})
	err := s.Prompt(t.Context(), "hi", PromptOptions{})
	stop()
	if len(sw.got) != 2 || sw.got[0] != set || sw.got[1] != second {
		t.Errorf("Switch saw %v, want the SetModel client, then the switched-to one", sw.got)
	}
	if len(sw.refs) != 2 || sw.refs[0] != "ref-set" || sw.refs[1] != "ref-b" {
		t.Errorf("Switch saw refs %q, want the SetModel target's, then the switched-to one's", sw.refs)
	}
	if r := sw.reports[0]; r.Class != retry.UsageLimit || r.Hint != 5*time.Hour {
		t.Errorf("Switch got report %+v, want a usage limit with the 5 h hint", r)
	}
	if first.calls() != 0 || set.calls() != 1 || second.calls() != 1 {
		t.Errorf("calls %d %d %d", first.calls(), set.calls(), second.calls())
	}
	starts := of[AutoRetryStartEvent](rec)
	if len(starts) != 1 || starts[0].DelayMs != 0 || starts[0].SwitchedTo != "b" {
		t.Errorf("auto_retry_start %+v", starts)
	}
	var re *RunError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "usage limit: resets at 15:00 (in 5h0m)") {
		t.Errorf("err %v, want it to name the reset", err)
	}
}

// TestProviderMaxRetries: a provider's own maxRetries applies to the calls
// that go to it, whichever way the session got there: from the start,
// after a switch, after SetModel.
func TestProviderMaxRetries(t *testing.T) {
	strict := llm.Model{ID: "s", Provider: "strict"}
	overrides := func(provider string) retry.Policy {
		p := retry.Default()
		switch provider {
		case "strict":
			p.MaxRetries = 1
		case "never":
			p.MaxRetries = 0
		}
		return p
	}
	t.Run("after a switch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			first := &fake{steps: []step{{err: usageLimit()}}}
			second := &fake{steps: []step{{err: overloaded()}, {err: overloaded()}, {text: "never"}}}
			sw := &froms{targets: []llm.Target{{Provider: second, Model: strict, Name: "strict/s"}}}
			s, rec, stop := newSession(t, first, Config{Switcher: sw, Retry: overrides})
			err := s.Prompt(t.Context(), "hi", PromptOptions{})
			stop()
			starts := of[AutoRetryStartEvent](rec)
			if len(starts) != 1 || starts[0].MaxAttempts != 3 || starts[0].SwitchedTo != "strict/s" {
				t.Errorf("auto_retry_start %+v, want the switch under fake's 3 retries", starts)
			}
			var re *RunError
			if !errors.As(err, &re) || !re.Exhausted || re.Retries != 1 || second.calls() != 1 {
				t.Errorf("err %v after %d calls to strict, want exhausted: strict allows 1 retry, the switch used it", err, second.calls())
			}
		})
	})
	t.Run("after SetModel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			set := &fake{steps: []step{{err: overloaded()}, {text: "never"}}}
			s, rec, stop := newSession(t, &fake{}, Config{Retry: overrides})
			s.SetModel(llm.Target{Provider: set, Model: llm.Model{ID: "n", Provider: "never"}})
			err := s.Prompt(t.Context(), "hi", PromptOptions{})
			stop()
			if n := len(of[AutoRetryStartEvent](rec)); n != 0 || set.calls() != 1 || err == nil {
				t.Errorf("%d retries, %d calls, err %v: provider never has maxRetries 0", n, set.calls(), err)
			}
		})
	})
	t.Run("others keep the policy's", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{steps: []step{{err: overloaded()}, {err: overloaded()}, {text: "ok"}}}
			s, rec, stop := newSession(t, f, Config{Retry: overrides})
			if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if starts := of[AutoRetryStartEvent](rec); len(starts) != 2 || starts[0].MaxAttempts != 3 {
				t.Errorf("auto_retry_start %+v", starts)
			}
		})
	})
}

// TestClassifyHook: Config.Classify decides what a failure is; the
// default is retry.Inspect.
func TestClassifyHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: badKey()}, {text: "ok"}}}
		calls := 0
		classify := func(err error, now time.Time) retry.Report {
			calls++
			r := retry.Inspect(err, now)
			r.Class, r.Hint = retry.Transient, 3*time.Second // our proxy says 401 while it restarts
			return r
		}
		s, rec, stop := newSession(t, f, Config{Classify: classify})
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		stop()
		if starts := of[AutoRetryStartEvent](rec); calls != 1 || len(starts) != 1 || starts[0].DelayMs != 3000 || starts[0].ErrorClass != retry.Transient {
			t.Errorf("hook called %d times; auto_retry_start %+v", calls, starts)
		}
	})
}
