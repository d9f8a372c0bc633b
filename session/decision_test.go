package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

// The journal records what was decided about every failed call and how
// each retry chain ended, so that viewers draw it instead of guessing.
func TestJournalRecordsDecisions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []step
		history []llm.Message
		cfg     Config
		cancel  bool // AbortRetry once the first wait has begun
		// want is each assistant entry's decision, written as
		// retried/attempt/delayMs/class/end ("-" for none).
		want []string
	}{
		{"retried then answered", []step{{err: overloaded()}, {err: unavailable()}, {text: "hi"}}, nil, Config{}, false,
			[]string{"true/1/2000/transient/", "true/2/4000/transient/", "false/2/0//succeeded"}},
		{"exhausted", []step{{err: overloaded()}, {err: overloaded()}, {err: overloaded()}, {err: overloaded()}}, nil, Config{}, false,
			[]string{"true/1/2000/transient/", "true/2/4000/transient/", "true/3/8000/transient/", "false/3/0/transient/exhausted"}},
		{"fatal at once", []step{{err: badKey()}}, nil, Config{}, false,
			[]string{"false/0/0/fatal/failed"}},
		{"cancelled in the wait", []step{{err: overloaded()}}, nil, Config{}, true,
			[]string{"false/1/2000/transient/cancelled"}},
		{"overflow handed to compaction", []step{{err: overflowErr()}, {text: "## Goal\nsummary"}, {text: "answer"}}, history(6), Config{Compaction: small}, false,
			[]string{"-", "-", "-", "-", "-", "-", "true/0/0/context_overflow/compaction", "-"}},
		{"answer outside a chain", []step{{text: "hi"}}, nil, Config{}, false, []string{"-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j, resume := persisted(t, tc.history)
				f := &fake{steps: tc.steps}
				cfg := tc.cfg
				cfg.Store, cfg.Resume = j, resume
				s, _, stop := newSession(t, f, cfg)
				done := make(chan error, 1)
				go func() { done <- s.Prompt(context.Background(), "go", PromptOptions{}) }()
				if tc.cancel {
					synctest.Wait()
					s.AbortRetry()
				}
				<-done
				stop()
				j.Close()
				ld, err := journal.Load(j.Path())
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range ld.Entries {
					if e.Message == nil || e.Message.Role != llm.Assistant {
						continue
					}
					d := e.Decision()
					switch {
					case d == nil:
						got = append(got, "-")
					case d.Estimated:
						t.Errorf("entry %s: decision estimated, want recorded", e.ID)
					default:
						got = append(got, fmt.Sprintf("%v/%d/%d/%s/%s", e.Retried, d.Attempt, d.DelayMs, d.Class, d.End))
					}
				}
				if strings.Join(got, " ") != strings.Join(tc.want, " ") {
					t.Errorf("decisions\n got %q\nwant %q", got, tc.want)
				}
			})
		})
	}
}
