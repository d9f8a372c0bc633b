package tui

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

const err503 = "fake-llm: 503 service unavailable (server_error): That model is currently overloaded"

// startRun sends a prompt and delivers the first, failed attempt of a run
// with streamed partial text.
func startRun(t *testing.T, m *Model, f *fakeSession, prompt, partial string) {
	t.Helper()
	typeText(m, prompt)
	cmd := press(m, "enter")
	if !m.busy() {
		t.Fatal("enter did not start a run")
	}
	run(m, cmd) // Prompt returns at once in the fake: the run is still going until settled
	ev(m, runStartMsg{})
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(prompt)}}})
	ev(m, assistantStartMsg{})
	if partial != "" {
		ev(m, deltaMsg{text: partial})
	}
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: err503, Content: []llm.Content{llm.Text(partial)}}})
}

func retryStart(m *Model, attempt int, delay time.Duration) tea.Cmd {
	return ev(m, retryStartMsg{attempt: attempt, max: 3, at: t0, until: t0.Add(delay), err: err503, class: "transient"})
}

func TestLoaderCountdown(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "What does rally do?", "")
	if cmd := retryStart(m, 2, 4*time.Second); cmd == nil {
		t.Fatal("no countdown tick scheduled")
	}
	golden(t, "loader", screen(m))
	if !strings.Contains(screen(m), "Retrying (2/3) in 4s… (esc to cancel)") {
		t.Fatalf("no loader:\n%s", screen(m))
	}
	// Ticks carry their time; the seconds count down with them.
	for i, want := range []string{"in 4s…", "in 3s…", "in 3s…", "in 1s…"} {
		at := t0.Add([]time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 3 * time.Second}[i])
		_, cmd := m.Update(tickMsg{seq: m.tickSeq, at: at})
		if !strings.Contains(screen(m), "Retrying (2/3) "+want) {
			t.Fatalf("at %v: want %q in\n%s", at.Sub(t0), want, screen(m))
		}
		if cmd == nil {
			t.Fatalf("at %v: the countdown stopped", at.Sub(t0))
		}
	}
	// A stale tick (an earlier loader's) changes nothing.
	m.Update(tickMsg{seq: m.tickSeq - 1, at: t0.Add(10 * time.Second)})
	if !strings.Contains(screen(m), "in 1s…") {
		t.Fatalf("a stale tick moved the countdown:\n%s", screen(m))
	}
}

func TestEscape(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "hi there", "")
	// While streaming, Esc aborts the turn.
	press(m, "esc")
	if f.aborts != 1 || f.abortRetry != 0 {
		t.Fatalf("esc while running: aborts %d, abortRetry %d", f.aborts, f.abortRetry)
	}
	// During the retry wait, Esc cancels the retry only.
	retryStart(m, 1, 2*time.Second)
	press(m, "esc")
	if f.aborts != 1 || f.abortRetry != 1 {
		t.Fatalf("esc during the wait: aborts %d, abortRetry %d", f.aborts, f.abortRetry)
	}
	// The retried run starts: the loader goes and Esc interrupts again.
	ev(m, runStartMsg{})
	if strings.Contains(screen(m), "Retrying") {
		t.Fatalf("a new run left the loader:\n%s", screen(m))
	}
	press(m, "esc")
	if f.aborts != 2 || f.abortRetry != 1 {
		t.Fatalf("esc in the retried run: aborts %d, abortRetry %d", f.aborts, f.abortRetry)
	}
	// auto_retry_end also removes the loader.
	retryStart(m, 2, 2*time.Second)
	ev(m, retryEndMsg{success: true, attempt: 2})
	if strings.Contains(screen(m), "Retrying") {
		t.Fatalf("auto_retry_end left the loader:\n%s", screen(m))
	}
}

func TestFinalLines(t *testing.T) {
	cases := []struct {
		name   string
		events func(m *Model)
		err    error
		want   string
	}{
		{"retry failed", func(m *Model) {
			retryStart(m, 3, 2*time.Second)
			ev(m, retryEndMsg{attempt: 3, finalError: err503})
		}, &session.RunError{Retries: 3, Err: errors.New(err503)}, "Retry failed after 4 calls (3 retries): " + err503},
		{"retry cancelled", func(m *Model) {
			retryStart(m, 1, 2*time.Second)
			ev(m, retryEndMsg{attempt: 1, finalError: session.RetryCancelled, cancelled: true})
		}, session.ErrRetryCancelled, "Retry cancelled"},
		{"aborted after retries", func(m *Model) {
			retryStart(m, 2, 2*time.Second)
			ev(m, runStartMsg{})
			ev(m, assistantStartMsg{})
			ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Aborted}})
			ev(m, retryEndMsg{attempt: 2, finalError: session.RetryCancelled, cancelled: true})
		}, context.Canceled, "Aborted after 3 calls (2 retries)"},
		{"aborted", func(m *Model) {
			ev(m, runStartMsg{})
			ev(m, assistantStartMsg{})
			ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Aborted}})
		}, context.Canceled, "Operation aborted"},
		{"fail fast on a long reset", func(m *Model) {
			ev(m, runStartMsg{})
			ev(m, assistantStartMsg{})
			ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: "429 usage limit"}})
		}, &session.RunError{Class: retry.UsageLimit, Reason: "usage limit: resets at 17:00 (in 5h0m), longer than maxDelayMs 1m0s", Err: errors.New("429 usage limit")},
			"Error: usage limit: resets at 17:00 (in 5h0m), longer than maxDelayMs 1m0s: 429 usage limit"},
		{"fatal", func(m *Model) {
			ev(m, runStartMsg{})
			ev(m, assistantStartMsg{})
			ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Error, ErrorMessage: "fake-llm: 401 invalid api key"}})
		}, errors.New("fake-llm: 401 invalid api key"), "Error: fake-llm: 401 invalid api key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, f := testModel(t, Options{})
			f.promptErr = c.err
			typeText(m, "go")
			cmd := press(m, "enter")
			c.events(m)
			run(m, cmd)
			ev(m, settledMsg{err: c.err}) // agent_settled carries what Prompt returned
			s := screen(m)
			if strings.Count(strings.ReplaceAll(s, "\n", " "), c.want) != 1 {
				t.Fatalf("want %q once in\n%s", c.want, s)
			}
			for _, other := range []string{"Retry failed", "Retry cancelled", "Aborted after", "Operation aborted", "Error:"} {
				if !strings.HasPrefix(c.want, other) && strings.Contains(s, other) {
					t.Errorf("also shows %q:\n%s", other, s)
				}
			}
			if m.busy() {
				t.Error("the run did not end")
			}
			if c.name == "retry failed" {
				golden(t, "final-failure", s)
			}
		})
	}
}

func TestDiscard(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "tell me", "The first paragraph was cut off mid")
	if !strings.Contains(screen(m), "The first paragraph was cut off mid") {
		t.Fatalf("partial text not shown:\n%s", screen(m))
	}
	ev(m, discardMsg{})
	if strings.Contains(screen(m), "cut off mid") {
		t.Fatalf("the discarded text is still on screen:\n%s", screen(m))
	}
	retryStart(m, 1, 2*time.Second)
	ev(m, runStartMsg{})
	ev(m, assistantStartMsg{})
	full := "The first paragraph was cut off mid-stream and then sent again in full."
	for _, w := range strings.SplitAfter(full, " ") {
		ev(m, deltaMsg{text: w})
	}
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text(full)}}})
	ev(m, retryEndMsg{success: true, attempt: 1})
	ev(m, settledMsg{})
	s := screen(m)
	if n := strings.Count(s, "The first paragraph"); n != 1 {
		t.Fatalf("the paragraph shows %d times:\n%s", n, s)
	}
	golden(t, "discard", s)
}

func TestStatusLine(t *testing.T) {
	m, f := testModel(t, Options{Info: Info{Model: llm.Model{Provider: "anthropic", ID: "claude-sonnet-4-5", ContextWindow: 200000}, SessionName: "refactor"}})
	startRun(t, m, f, "hi", "")
	// The session's figures after that answer, which the status line shows.
	f.usage, f.contextTokens = llm.Usage{Input: 12000, Output: 345, Cost: llm.Cost{Total: 0.0421}}, 12345
	run(m, ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("hello")},
		Usage: &llm.Usage{Input: 12000, Output: 345, Cost: llm.Cost{Total: 0.0421}}}}))
	retryStart(m, 1, 2*time.Second)
	golden(t, "status", statusOf(m))
	for _, c := range []struct {
		msg  retryStartMsg
		want string
	}{
		{retryStartMsg{attempt: 2, max: 3, at: t0, until: t0.Add(time.Minute), class: "usage_limit"}, "waiting for a usage-limit reset 2/3"},
		{retryStartMsg{attempt: 2, max: 3, at: t0, until: t0, class: "usage_limit", switchedTo: "anthropic/k2"}, "retrying 2/3"},
	} {
		ev(m, c.msg)
		if !strings.Contains(statusOf(m), c.want) {
			t.Errorf("status %q, want it to end %q", statusOf(m), c.want)
		}
	}
	f.model = llm.Model{Provider: "openai", ID: "gpt-4.1"}
	run(m, ev(m, retryStartMsg{attempt: 3, max: 3, at: t0, until: t0, class: "usage_limit", switchedTo: "openai/gpt-4.1"}))
	if !strings.HasPrefix(statusOf(m), " openai/gpt-4.1 ·") {
		t.Errorf("status %q, want the fallback model", statusOf(m))
	}
	ev(m, runStartMsg{})
	if !strings.Contains(statusOf(m), "switched to openai/gpt-4.1") {
		t.Errorf("status %q, want the switch named", statusOf(m))
	}
	if !strings.Contains(screen(m), "Usage limit reached: switched to anthropic/k2") {
		t.Errorf("no switch line:\n%s", screen(m))
	}
}

func statusOf(m *Model) string {
	lines := strings.Split(strings.TrimRight(screen(m), "\n"), "\n")
	return lines[len(lines)-1]
}

func TestCompaction(t *testing.T) {
	m, f := testModel(t, Options{})
	typeText(m, "/compact")
	cmd := press(m, "enter")
	if !strings.Contains(screen(m), "Compacting… (esc to cancel)") {
		t.Fatalf("no compacting line:\n%s", screen(m))
	}
	press(m, "esc")
	if f.aborts != 1 {
		t.Fatalf("esc while compacting: %d aborts", f.aborts)
	}
	ev(m, compactStartMsg{reason: "manual"})
	ev(m, compactEndMsg{reason: "manual", tokensBefore: 1543, done: true})
	run(m, cmd)
	ev(m, settledMsg{}) // an explicit compaction ends with agent_settled too
	if m.busy() {
		t.Fatal("the compaction did not end")
	}
	if f.compacts != 1 {
		t.Fatalf("%d compactions", f.compacts)
	}
	s := screen(m)
	if !strings.Contains(s, "Compacted (manual): 1543 tokens of older messages summarised") || strings.Contains(s, "Compacting…") {
		t.Fatalf("compaction summary missing:\n%s", s)
	}
}

// fakeHost serves the host commands from memory.
type fakeHost struct {
	next   *fakeSession
	set    []llm.Model
	models []llm.Model
}

func (h *fakeHost) NewSession(context.Context) (Session, error) { return h.next, nil }
func (h *fakeHost) OpenSession(_ context.Context, path string) (Session, error) {
	h.next.sessionFile = path
	return h.next, nil
}
func (h *fakeHost) Sessions() ([]SessionInfo, error) {
	return []SessionInfo{{Path: "/s/new.jsonl", FirstPrompt: "newest", Modified: t0.Add(-5 * time.Minute), Messages: 4},
		{Path: "/s/old.jsonl", FirstPrompt: "older", Modified: t0.Add(-50 * time.Hour), Messages: 2}}, nil
}
func (h *fakeHost) Models() []llm.Model { return h.models }
func (h *fakeHost) SetModel(_ context.Context, _ Session, m llm.Model) error {
	h.set = append(h.set, m)
	return nil
}
func (h *fakeHost) Settings() []string { return []string{"retry.enabled true"} }

func TestHostCommands(t *testing.T) {
	next := newFake()
	next.messages = []llm.Message{{Role: llm.User, Content: []llm.Content{llm.Text("an old question")}},
		{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("an old answer")}}}
	h := &fakeHost{next: next, models: []llm.Model{{Provider: "sim", ID: "sim"}, {Provider: "openai", ID: "gpt-4.1", ContextWindow: 1047576}}}
	m, _ := testModel(t, Options{Host: h})
	m.clock = func() time.Time { return t0 }
	run(m, m.fetchModels())

	typeText(m, "/model")
	press(m, "enter")
	if s := screen(m); !strings.Contains(s, "2  openai/gpt-4.1 · 1.05M ctx") {
		t.Fatalf("/model:\n%s", s)
	}
	typeText(m, "/model 2")
	run(m, press(m, "enter"))
	if len(h.set) != 1 || h.set[0].ID != "gpt-4.1" || !strings.HasPrefix(statusOf(m), " openai/gpt-4.1") {
		t.Fatalf("/model 2: set %v, status %q", h.set, statusOf(m))
	}
	typeText(m, "/settings")
	run(m, press(m, "enter"))
	if !strings.Contains(screen(m), "retry.enabled true") {
		t.Fatalf("/settings:\n%s", screen(m))
	}
	typeText(m, "/resume")
	run(m, press(m, "enter"))
	if s := screen(m); !strings.Contains(s, "1  5m ago     4 msgs  newest") || !strings.Contains(s, "2  2d ago     2 msgs  older") {
		t.Fatalf("/resume:\n%s", s)
	}
	gen := m.gen
	typeText(m, "/resume 2")
	run(m, press(m, "enter"))
	if m.gen != gen+1 || m.sess != Session(next) || next.sessionFile != "/s/old.jsonl" {
		t.Fatalf("/resume 2 did not switch sessions")
	}
	if s := screen(m); !strings.Contains(s, "an old question") || !strings.Contains(s, "an old answer") {
		t.Fatalf("the resumed session's messages are not shown:\n%s", s)
	}
	// Late events of the old session are dropped.
	m.Update(eventMsg{gen: gen, msg: retryStartMsg{attempt: 1, max: 3, at: t0, until: t0.Add(time.Second)}})
	if strings.Contains(screen(m), "Retrying") {
		t.Fatal("an old session's event reached the screen")
	}
	typeText(m, "/new")
	run(m, press(m, "enter"))
	if m.gen != gen+2 || !strings.Contains(screen(m), "New session") {
		t.Fatalf("/new:\n%s", screen(m))
	}
}

func TestThinkingAndTools(t *testing.T) {
	m, f := testModel(t, Options{})
	startRun(t, m, f, "x", "")
	ev(m, runStartMsg{})
	ev(m, assistantStartMsg{})
	ev(m, deltaMsg{text: "I should read the file.\nThen answer.", thinking: true})
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.ToolUse, Content: []llm.Content{
		{Type: llm.ThinkingType, Thinking: "I should read the file.\nThen answer."}}}})
	var out []string
	for i := 1; i <= 20; i++ {
		out = append(out, "line "+itoa(i))
	}
	ev(m, toolStartMsg{id: "c1", name: "read", args: `{"path":"notes.txt"}`})
	ev(m, toolEndMsg{id: "c1", name: "read", result: strings.Join(out, "\n")})
	s := screen(m)
	for _, want := range []string{"thinking: I should read the file. (+1 lines, ctrl+t to expand)", `→ read {"path":"notes.txt"}`, "line 6", "… 14 more lines (ctrl+o to expand)"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "line 7") || strings.Contains(s, "Then answer.") {
		t.Errorf("collapsed parts show:\n%s", s)
	}
	press(m, "ctrl+t")
	press(m, "ctrl+o")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	s = screen(m)
	if !strings.Contains(s, "Then answer.") || !strings.Contains(s, "line 20") {
		t.Errorf("expanded parts missing:\n%s", s)
	}
}

func TestConfirm(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bool
	}{{"y", true}, {"n", false}, {"esc", false}} {
		m, f := testModel(t, Options{})
		reply := make(chan bool, 1)
		m.Update(confirmMsg{name: "bash", args: `{"command":"rm -rf build"}`, reply: reply})
		if !strings.Contains(screen(m), `Run bash {"command":"rm -rf build"}? [y/n]`) {
			t.Fatalf("no question:\n%s", screen(m))
		}
		press(m, c.key)
		if got := <-reply; got != c.want {
			t.Errorf("%s answered %v", c.key, got)
		}
		if strings.Contains(screen(m), "[y/n]") || f.aborts != 0 {
			t.Errorf("%s: question still shown or run aborted", c.key)
		}
	}
}

func TestColour(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		m := New(Options{Session: newFake(), NoColor: noColor})
		m.Update(infoMsg{err: errors.New("boom")})
		out := m.render()
		if has := colourSGR.MatchString(out); has == noColor {
			t.Errorf("NoColor %v: escape sequences %v in %q", noColor, has, out)
		}
		if !noColor && !strings.Contains(out, "\x1b[31mboom") {
			t.Errorf("the error is not red: %q", out)
		}
	}
}

// colourSGR matches an escape sequence that sets a colour.
var colourSGR = regexp.MustCompile(`\x1b\[(?:[0-9]*;)*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`)

func TestMarkdownOnEnd(t *testing.T) {
	f := newFake()
	m := New(Options{Session: f})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	startRun(t, m, f, "x", "")
	ev(m, runStartMsg{})
	ev(m, assistantStartMsg{})
	ev(m, deltaMsg{text: "# Title\n\n**bold** text"})
	if !strings.Contains(screen(m), "**bold**") {
		t.Fatalf("streamed text is not shown as it came:\n%s", screen(m))
	}
	ev(m, messageEndMsg{msg: llm.Message{Role: llm.Assistant, StopReason: llm.Stop, Content: []llm.Content{llm.Text("# Title\n\n**bold** text")}}})
	s := screen(m)
	if strings.Contains(s, "**bold**") || !strings.Contains(s, "bold text") {
		t.Fatalf("not rendered as Markdown:\n%s", s)
	}
}

func TestResizeRewraps(t *testing.T) {
	m, _ := testModel(t, Options{})
	long := strings.Repeat("word ", 30)
	m.Update(infoMsg{lines: []string{long}})
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 20})
	for _, l := range strings.Split(screen(m), "\n") {
		if w := len([]rune(l)); w > 40 {
			t.Fatalf("line of %d columns after resizing to 40: %q", w, l)
		}
	}
}

// TestStreamWrapIncremental checks that wrapping a streaming answer delta
// by delta gives the lines a full wrap gives, at several widths.
func TestStreamWrapIncremental(t *testing.T) {
	text := strings.Repeat("Streaming text arrives in small pieces, some mid-word, and\nsometimes a newline; a verylongunbreakablewordthatexceedsthewidthofthescreen too. ", 6)
	for _, w := range []int{20, 41, 80} {
		m, _ := testModel(t, Options{})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 20})
		ev(m, assistantStartMsg{})
		for i := 0; i < len(text); i += 7 {
			ev(m, deltaMsg{text: text[i:min(i+7, len(text))]})
			m.render()
		}
		b := &m.tr.blocks[len(m.tr.blocks)-1]
		got := strings.Join(b.lines, "\n")
		if want := wrap(b.text, w); got != want || b.text != text {
			t.Errorf("width %d: incremental wrap\n%s\nwant\n%s", w, got, want)
		}
	}
}

func TestScroll(t *testing.T) {
	m, _ := testModel(t, Options{})
	for i := 1; i <= 40; i++ {
		m.Update(infoMsg{lines: []string{"entry " + itoa(i)}})
	}
	if s := screen(m); !strings.Contains(s, "entry 40") || strings.Contains(s, "entry 30\n") {
		t.Fatalf("not at the bottom:\n%s", s)
	}
	press(m, "pgup")
	if s := screen(m); strings.Contains(s, "entry 40") || !strings.Contains(s, "entry 31") {
		t.Fatalf("pgup:\n%s", s)
	}
	press(m, "pgup", "pgup", "pgup", "pgup", "pgup")
	if s := screen(m); !strings.Contains(s, "entry 1\n") {
		t.Fatalf("pgup to the top:\n%s", s)
	}
	press(m, "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown")
	if s := screen(m); !strings.Contains(s, "entry 40") {
		t.Fatalf("pgdown back to the bottom:\n%s", s)
	}
}

func TestCompactionCancelled(t *testing.T) {
	m, f := testModel(t, Options{})
	f.promptErr = context.Canceled
	typeText(m, "/compact")
	cmd := press(m, "enter")
	ev(m, compactStartMsg{reason: "manual"})
	press(m, "esc")
	ev(m, compactEndMsg{reason: "manual", aborted: true})
	run(m, cmd)
	ev(m, settledMsg{err: context.Canceled})
	s := screen(m)
	if strings.Count(s, "Compaction cancelled") != 1 || strings.Contains(s, "Operation aborted") || strings.Contains(s, "Compacting…") || m.busy() {
		t.Fatalf("cancelled compaction:\n%s", s)
	}
}

func TestCompactionNothing(t *testing.T) {
	m, f := testModel(t, Options{})
	f.promptErr = session.ErrNothingToCompact
	typeText(m, "/compact")
	cmd := press(m, "enter")
	run(m, cmd) // Prompt's return first, the events after it
	ev(m, compactEndMsg{reason: "manual"})
	ev(m, settledMsg{err: session.ErrNothingToCompact})
	if s := screen(m); !strings.Contains(s, "Nothing to compact yet") || strings.Contains(s, "Error") || m.busy() {
		t.Fatalf("nothing to compact:\n%s", s)
	}
}

// TestSessionFileNotices: what loading the resumed session skipped is
// shown when the UI opens it, and a save that failed is shown as it
// happens.
func TestSessionFileNotices(t *testing.T) {
	f := newFake()
	f.warnings = []string{"line 4: torn last line skipped (the writer stopped mid-line): unexpected end of JSON input", "line 9: corrupt entry skipped"}
	m, _ := testModel(t, Options{Session: f})
	flat := func() string { return strings.Join(strings.Fields(screen(m)), " ") } // lines wrap
	if s := flat(); !strings.Contains(s, "Session file: line 4: torn last line skipped") || !strings.Contains(s, "(1 more in the log)") {
		t.Errorf("no load warning:\n%s", s)
	}
	ev(m, storeErrorMsg{op: "save message", err: "no space left on device"})
	if s := flat(); !strings.Contains(s, "Session file not saved (save message): no space left on device; the session goes on in memory") {
		t.Errorf("no save failure:\n%s", s)
	}
}

// TestLearnedWindowInStatus: after a compaction (and after a run) the
// status line shows the window as the session knows it, so a window
// learned from an overflow replaces the catalog's.
func TestLearnedWindowInStatus(t *testing.T) {
	m, f := testModel(t, Options{Info: Info{Model: llm.Model{Provider: "local", ID: "qwen", ContextWindow: 128000}}})
	if !strings.Contains(statusOf(m), "/128k") {
		t.Fatalf("status %q", statusOf(m))
	}
	startRun(t, m, f, "hi", "")
	f.model = llm.Model{Provider: "local", ID: "qwen", ContextWindow: 8192}
	run(m, ev(m, compactEndMsg{reason: "overflow", tokensBefore: 9000, done: true}))
	if !strings.Contains(statusOf(m), "/8.2k") {
		t.Errorf("status after the compaction %q, want the learned 8.2k window", statusOf(m))
	}
	f.model.ContextWindow = 4096
	run(m, ev(m, settledMsg{}))
	if !strings.Contains(statusOf(m), "/4.1k") {
		t.Errorf("status after the run %q, want 4.1k", statusOf(m))
	}
}
