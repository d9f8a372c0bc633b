package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/session"
)

// state delivers the fake session's State as a read that is newer than
// any before it.
func state(m *Model, f *fakeSession) {
	m.Update(stateMsg{gen: m.gen, seq: max(m.stateSeq, m.applied) + 1, st: f.State()})
}

// TestResetWaitLoader: a wait for a usage limit's reset counts down in
// hours and minutes to the time it resumes, in the clock's zone; the
// status line keeps it; when the session's Phase.Until moves (the laptop
// slept) the loader follows; Esc cancels the wait.
func TestResetWaitLoader(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	at := time.Date(2026, 12, 1, 12, 47, 0, 0, cet)
	until := time.Date(2026, 12, 1, 15, 0, 0, 0, cet)
	m, f := testModel(t, Options{})
	startRun(t, m, f, "refactor it", "")
	ev(m, resetWaitMsg{attempt: 1, until: until})
	ev(m, retryStartMsg{attempt: 1, max: 3, at: at, until: until, err: "429 usage limit", class: "usage_limit"})
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"start", func() {}, []string{"usage limit · resumes at 15:00 (in 2h 13m) · esc to cancel", "resumes at 15:00 (in 2h 13m)"}},
		{"13 minutes on", func() { m.Update(tickMsg{seq: m.tickSeq, at: at.Add(13 * time.Minute)}) }, []string{"usage limit · resumes at 15:00 (in 2h) · esc to cancel"}},
		{"the session's deadline moved", func() {
			f.phase = session.Phase{Kind: session.PhaseRetryWait, Attempt: 1, MaxAttempts: 3, Until: until.Add(-90 * time.Minute)}
			state(m, f)
		}, []string{"usage limit · resumes at 13:30 (in 30m) · esc to cancel", "resumes at 13:30 (in 30m)"}},
	}
	for _, st := range steps {
		st.do()
		s := screen(m)
		if !strings.Contains(s, st.want[0]) {
			t.Fatalf("%s: want the loader %q in\n%s", st.name, st.want[0], s)
		}
		// The loader has it once; the status line is the second.
		if len(st.want) > 1 && strings.Count(s, st.want[1]) < 2 {
			t.Errorf("%s: the status line lacks %q:\n%s", st.name, st.want[1], s)
		}
	}
	press(m, "esc")
	if f.abortRetry != 1 {
		t.Errorf("esc called AbortRetry %d times, want 1", f.abortRetry)
	}
}

// TestLoaderFollowsPhase: the countdown of any retry wait ends at the
// session's Phase.Until, not at the event's arrival plus its delay.
func TestLoaderFollowsPhase(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "What does rally do?", "")
	retryStart(m, 2, 4*time.Second)
	if !strings.Contains(screen(m), "Retrying (2/3) in 4s…") {
		t.Fatalf("no loader:\n%s", screen(m))
	}
	f.phase = session.Phase{Kind: session.PhaseRetryWait, Attempt: 2, MaxAttempts: 3, Until: t0.Add(10 * time.Second)}
	state(m, f)
	if !strings.Contains(screen(m), "Retrying (2/3) in 10s…") {
		t.Errorf("the loader did not follow Phase.Until:\n%s", screen(m))
	}
	f.phase = session.Phase{Kind: session.PhaseRetryWait, Attempt: 3, MaxAttempts: 3, Until: t0.Add(time.Minute)}
	state(m, f)
	if !strings.Contains(screen(m), "Retrying (2/3) in 10s…") {
		t.Errorf("another attempt's phase moved the loader:\n%s", screen(m))
	}
}

// TestInterruptedWaitQuestion: a session resumed after a rally stopped
// during a wait for a reset asks first; y resumes the wait as a run, n
// leaves it; other keys wait for the answer.
func TestInterruptedWaitQuestion(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	until := time.Date(2026, 12, 1, 15, 0, 0, 0, cet)
	const q = "A usage-limit wait until 15:00 was interrupted; resume waiting? (y/n)"
	for _, tt := range []struct {
		key     string
		resumed int
		says    string
	}{{"y", 1, "Resuming the wait"}, {"n", 0, "not resumed"}, {"esc", 0, "not resumed"}} {
		t.Run(tt.key, func(t *testing.T) {
			resumed := 0
			m, _ := testModel(t, Options{Interrupted: &InterruptedWait{Until: until.UTC(), Resume: func(context.Context) error { resumed++; return nil }}})
			m.clock = func() time.Time { return time.Date(2026, 12, 1, 12, 47, 0, 0, cet) }
			if !strings.Contains(screen(m), q) {
				t.Fatalf("no question:\n%s", screen(m))
			}
			press(m, "x")
			if !strings.Contains(screen(m), q) || m.ed.value() != "" {
				t.Fatalf("a key that is no answer went past the question:\n%s", screen(m))
			}
			run(m, press(m, tt.key))
			if resumed != tt.resumed || strings.Contains(screen(m), q) || !strings.Contains(screen(m), tt.says) {
				t.Errorf("resumed %d times, want %d; screen:\n%s", resumed, tt.resumed, screen(m))
			}
		})
	}
}
