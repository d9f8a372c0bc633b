package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rally-agent/rally/internal/clockfmt"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// A wait for a usage limit's reset (retry.waitForReset) can last hours:
// its loader names the time it resumes and counts down hours and minutes,
// "usage limit · resumes at 15:00 (in 2h 13m) · esc to cancel", and the
// status line keeps "resumes at 15:00 (in 2h 13m)". When it ends comes
// from the session's State().Phase.Until, which follows the wall clock (a
// laptop that slept, a clock that was set), not from when an event
// arrived.

// resetWaitMsg is retry_waiting: retry attempt waits for a reset until
// until. It comes right before the auto_retry_start it explains.
type resetWaitMsg struct {
	attempt int
	until   time.Time
}

// heartbeatMsg is retry_heartbeat: it changes nothing itself, but as any
// event it has the state read again, whose Phase.Until may have moved.
type heartbeatMsg struct{}

// translateWait turns the events of a wait for a reset into messages.
func translateWait(e session.Event) any {
	if e, ok := e.(session.RetryWaitingEvent); ok {
		return resetWaitMsg{attempt: e.Attempt, until: time.UnixMilli(e.UntilMs)}
	}
	return heartbeatMsg{}
}

// startLoader marks a loader that starts a wait for a reset announced by
// retry_waiting.
func (m *Model) startLoader(l *retryStartMsg) {
	if w := m.resetNext; w != nil && w.attempt == l.attempt {
		l.reset, l.until = true, w.until
	}
	m.resetNext = nil
}

// followPhase moves the loader's end to the session's Phase.Until, the
// one truth of when the retry starts.
func (m *Model) followPhase() {
	p, l := m.state.Phase, m.loader
	if l == nil || p.Kind != session.PhaseRetryWait || p.Attempt != l.attempt || p.Until.IsZero() {
		return
	}
	l.until = p.Until
}

// resetLeft is what the reset loader shows: the time of day it resumes and
// how long until then, in hours and minutes.
func (m *Model) resetLeft() (at, left string) {
	l := m.loader
	return retry.WallClock(m.now, l.until), clockfmt.Left(l.until.Sub(m.now))
}

// resetLoaderLine is the loader of a wait for a reset, shortened to fit w.
func (m *Model) resetLoaderLine(w int) string {
	at, left := m.resetLeft()
	forms := []string{
		fmt.Sprintf("usage limit · resumes at %s (in %s) · esc to cancel", at, left),
		fmt.Sprintf("resumes at %s (in %s) · esc to cancel", at, left),
		fmt.Sprintf("in %s · esc to cancel", left),
	}
	for _, f := range forms {
		if lipgloss.Width(f) <= w {
			return f
		}
	}
	return "esc to cancel"
}

// resetState is the status line's retry state during a wait for a reset.
func (m *Model) resetState() string {
	at, left := m.resetLeft()
	return fmt.Sprintf("resumes at %s (in %s)", at, left)
}

// InterruptedWait is a wait for a usage limit's reset that the resumed
// session's file was stopped in (rally --continue after a rally stopped
// during the wait): the UI asks whether to resume it.
type InterruptedWait struct {
	Until time.Time
	// Resume waits out the rest and continues the interrupted prompt
	// (session.ResumeWait); it returns when that run has settled.
	Resume func(ctx context.Context) error
}

// resumeQuestion is the question while an interrupted wait is asked
// about, or "".
func (m *Model) resumeQuestion() string {
	w := m.opts.Interrupted
	if w == nil || m.resumeAsked {
		return ""
	}
	return fmt.Sprintf("A usage-limit wait until %s was interrupted; resume waiting? (y/n)", retry.WallClock(m.clock(), w.Until))
}

// resumeKey answers the question: y resumes the wait as a run, n (or
// Esc) leaves the session as it is. Other keys wait for an answer.
func (m *Model) resumeKey(k string) tea.Cmd {
	switch k {
	case "y", "Y":
		m.resumeAsked = true
		m.tr.add(block{kind: kInfo, text: "Resuming the wait for the usage limit's reset"})
		resume := m.opts.Interrupted.Resume
		return m.start(opPrompt, func(ctx context.Context, _ Session) error { return resume(ctx) })
	case "n", "N", "esc", "ctrl+c":
		m.resumeAsked = true
		m.tr.add(block{kind: kInfo, text: "The interrupted wait is not resumed"})
	}
	return nil
}
