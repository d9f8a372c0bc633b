package tui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// hookNoticeFor is the longest a hook failure stays in the status line;
// the next run clears it sooner.
const hookNoticeFor = 15 * time.Second

// HookFailure is one failed hook run (or batch of dropped events), as the
// status line names it: "hook failed: <Hook> on <Event>: <Reason>".
type HookFailure struct {
	Hook   string // which hook: "hooks[0] (notify-send)"
	Event  string // the event type it ran on
	Reason string // what went wrong: "exit status 1"
}

// maxPending is how many notices Alerts keeps for a UI that has not
// started yet; more are dropped (the log has them).
const maxPending = 32

// Alerts brings what the CLI learns on its own goroutines to the screen:
// hook failures and fleet waits to the status line, warnings (a fallback
// model in use, Redis not answering) to the transcript. Build it before
// the hooks and the session, call its methods from anywhere, and pass it
// to Run, which connects it to the screen. The zero Alerts is ready to
// use.
type Alerts struct {
	link
	// pmu guards pending and ended: notices said before Run started are
	// kept for it; after it ended, Notice refuses them.
	pmu     sync.Mutex
	pending []string
	ended   bool
}

// Notice shows text in the transcript as a notice. Said before the UI
// starts, it is kept and shown when it does. It reports false once the
// UI has ended: the caller then says it elsewhere (stderr).
func (a *Alerts) Notice(text string) bool {
	a.pmu.Lock()
	send := a.sender()
	switch {
	case a.ended:
		a.pmu.Unlock()
		return false
	case send == nil:
		if len(a.pending) < maxPending {
			a.pending = append(a.pending, text)
		}
		a.pmu.Unlock()
		return true
	}
	a.pmu.Unlock()
	send(noticeMsg{text})
	return true
}

// Waiting shows text in the status line for d (at least a second): a
// wait that delays the request in flight, such as a fleet cooldown. It
// reports false when no UI runs (a wait before the UI started is stale
// by the time it does).
func (a *Alerts) Waiting(text string, d time.Duration) bool {
	send := a.sender()
	if send == nil {
		return false
	}
	send(waitMsg{text: text, d: d})
	return true
}

// start connects the running UI and returns the notices said before it.
func (a *Alerts) start(send func(any)) []string {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	a.connect(send)
	p := a.pending
	a.pending = nil
	return p
}

// Drain ends Alerts for good and returns the notices no UI showed (it
// never started), for the caller to print.
func (a *Alerts) Drain() []string {
	a.end()
	a.pmu.Lock()
	defer a.pmu.Unlock()
	p := a.pending
	a.pending = nil
	return p
}

// end disconnects the UI for good.
func (a *Alerts) end() {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	a.connect(nil)
	a.ended = true
}

// HookFailed shows f in the status line, under the burst rule of
// hookNotice. It waits only for the UI to take the message; with no UI
// running it drops f (the log and the exit summary still have it).
func (a *Alerts) HookFailed(f HookFailure) {
	if send := a.sender(); send != nil {
		send(hookFailMsg{f})
	}
}

// link connects a helper that lives outside the program (Confirmer,
// Alerts) to the running UI.
type link struct {
	mu   sync.Mutex
	send func(any) // delivers a message to Update; nil when no UI runs
}

func (l *link) connect(send func(any)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.send = send
}

func (l *link) sender() func(any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.send
}

type hookFailMsg struct{ f HookFailure }

// noticeMsg is a transcript notice from Alerts.Notice.
type noticeMsg struct{ text string }

// waitMsg is a status-line wait from Alerts.Waiting.
type waitMsg struct {
	text string
	d    time.Duration
}

// waitExpireMsg ends the wait shown with the same seq.
type waitExpireMsg struct{ seq int }

// waitNotice is the status line's wait: shown for the wait's length.
type waitNotice struct {
	text string
	seq  int
}

func (m *Model) waiting(msg waitMsg) tea.Cmd {
	m.wait.text = msg.text
	m.wait.seq++
	seq := m.wait.seq
	return tea.Tick(max(msg.d, time.Second), func(time.Time) tea.Msg { return waitExpireMsg{seq} })
}

// hookExpireMsg ends the notice shown with the same seq.
type hookExpireMsg struct{ seq int }

// hookNotice is the status line's hook failure.
//
// A hook's failure burst is every failure of that hook from the start of
// one run (a prompt sent or taken from the queue, /compact) to the start
// of the next, or to a session switch (/new, /resume). Only the first
// failure of a burst is shown: a hook that fails on every retry of a
// chain, or on each of a run's events, is named once, and the others go
// to the log and the exit summary only. A burst of another hook replaces
// what is shown. The notice stays until the next run starts, at most
// hookNoticeFor.
type hookNotice struct {
	burst map[string]bool // the hooks that failed in the current burst
	text  string          // what the status line shows; "" for nothing
	seq   int             // of the expiry tick of text
	// showFor is how long text shows at most; 0 means hookNoticeFor.
	showFor time.Duration
}

// hookFailed handles a hook failure: shown if it opens its hook's burst.
func (m *Model) hookFailed(f HookFailure) tea.Cmd {
	n := &m.hooks
	if n.burst[f.Hook] {
		return nil
	}
	if n.burst == nil {
		n.burst = map[string]bool{}
	}
	n.burst[f.Hook] = true
	n.text = "hook failed: " + f.Hook + " on " + f.Event + ": " + f.Reason
	n.seq++
	seq, d := n.seq, n.showFor
	if d == 0 {
		d = hookNoticeFor
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return hookExpireMsg{seq} })
}

func (m *Model) hookExpired(msg hookExpireMsg) {
	if msg.seq == m.hooks.seq {
		m.hooks.text = ""
	}
}

// endHookBursts starts new bursts for every hook and clears the notice
// (a run starts, the session changes).
func (m *Model) endHookBursts() {
	m.hooks.burst = nil
	m.hooks.text = ""
	m.hooks.seq++ // a pending expiry is for what was shown before
}
