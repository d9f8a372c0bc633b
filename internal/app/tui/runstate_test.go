package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// The UI keeps one run fact (Model.op); the rest comes from the session:
// the run's result from agent_settled, the compaction line from the
// session's phase. These tests pin the orders the two goroutines (the
// prompt command and the event subscription) can deliver in.

// TestClosingLineFollowsTheRun: Prompt's return may reach Update before
// the run's events; the closing line still comes after them, once.
func TestClosingLineFollowsTheRun(t *testing.T) {
	const fatal = "fake-llm: 401 invalid api key"
	m, f := testModel(t, Options{})
	f.promptErr = errors.New(fatal)
	typeText(m, "go")
	run(m, press(m, "enter")) // the command returns first
	if !m.busy() || strings.Contains(screen(m), "Error:") {
		t.Fatalf("Prompt's return ended the run before its events:\n%s", screen(m))
	}
	ev(m, runStartMsg{})
	ev(m, assistantStartMsg{})
	ev(m, deltaMsg{text: "partial answer"})
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: fatal, Content: []llm.Content{llm.Text("partial answer")}}})
	ev(m, settledMsg{err: f.promptErr})
	s := screen(m)
	text, line := strings.Index(s, "partial answer"), strings.Index(s, "Error: "+fatal)
	if text < 0 || line < text || strings.Count(s, "Error: ") != 1 || m.busy() {
		t.Fatalf("want the answer, then one closing line, and the run over (busy %v):\n%s", m.busy(), s)
	}
}

// TestRefusedPromptEnds: a prompt the session refused has no events, no
// agent_settled among them: its return ends it.
func TestRefusedPromptEnds(t *testing.T) {
	for _, refusal := range []error{session.ErrBusy, session.ErrCompacting} {
		t.Run(refusal.Error(), func(t *testing.T) {
			m, f := testModel(t, Options{})
			f.promptErr = refusal
			typeText(m, "go")
			run(m, press(m, "enter"))
			if s := screen(m); strings.Count(s, "Error: "+refusal.Error()) != 1 || m.busy() {
				t.Fatalf("busy %v:\n%s", m.busy(), s)
			}
		})
	}
}

// TestCompactingLineFromPhase: an overflow compaction inside a prompt
// shows while the session's phase says compacting, and a phase read
// before the run settled does not keep the line after it.
func TestCompactingLineFromPhase(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "hi", "")
	f.phase = session.Phase{Kind: session.PhaseCompacting, Compaction: "overflow"}
	run(m, ev(m, compactStartMsg{reason: "overflow"}))
	if !strings.Contains(screen(m), "Compacting… (esc to cancel)") {
		t.Fatalf("no compacting line:\n%s", screen(m))
	}
	ev(m, settledMsg{}) // the state read it starts is not run: the phase shown is stale
	if s := screen(m); strings.Contains(s, "Compacting…") || strings.Contains(s, "Working…") {
		t.Fatalf("the settled run still shows a loader:\n%s", s)
	}
}

// TestSettledTranslation: the run's result reaches the model with
// agent_settled.
func TestSettledTranslation(t *testing.T) {
	err := errors.New("fake-llm: 401 invalid api key")
	if got := translate(session.AgentSettledEvent{Err: err}, t0); got != (settledMsg{err: err}) {
		t.Errorf("translated to %#v", got)
	}
}

// unknownEvent is a session event kind the UI has no case for.
type unknownEvent struct{}

func (unknownEvent) Kind() session.EventType { return "scratch_kind" }

// TestUnknownKindReadsState: an event of a kind the UI does not know
// still brings the session's state to the status line, so a new event
// whose facts are in State needs no UI change; the kinds the UI ignores
// on purpose read nothing.
func TestUnknownKindReadsState(t *testing.T) {
	m, f := testModel(t, Options{})
	msg := translate(unknownEvent{}, t0)
	if msg == nil {
		t.Fatal("an unknown kind was dropped")
	}
	f.phase = session.Phase{Kind: session.PhaseToolRunning, Tool: "bash"}
	run(m, ev(m, msg))
	if !strings.Contains(statusOf(m), "running bash") {
		t.Errorf("status %q, want the session's phase", statusOf(m))
	}
	for _, e := range []session.Event{session.ToolExecutionUpdateEvent{}, session.TurnEndEvent{}} {
		if got := translate(e, t0); got != nil {
			t.Errorf("%s: translated to %#v, want nothing", e.Kind(), got)
		}
	}
}
