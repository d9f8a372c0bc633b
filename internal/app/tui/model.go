package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// welcome opens the transcript: the keys a first-time user needs.
const welcome = "Enter sends, Alt+Enter adds a line, / lists the commands, Esc interrupts."

// Info is what the status line shows before any event says more.
type Info struct {
	Model       llm.Model
	SessionName string
}

// Options configure a Model.
type Options struct {
	Session Session
	Host    Host
	Info    Info
	// FirstPrompt is sent as soon as the UI starts (rally "…").
	FirstPrompt string
	// Interrupted, when set, is asked about first (wait.go).
	Interrupted *InterruptedWait
	// Context bounds prompts and compactions; nil means Background.
	Context context.Context
	// NoColor renders without colour (NO_COLOR).
	NoColor bool
	// listen subscribes the UI to a session's events (set by Run; nil in
	// model tests, which send the messages themselves).
	listen func(s Session, gen int) (stop func())
}

// Model is the bubbletea model of the terminal UI.
type Model struct {
	opts Options
	ctx  context.Context
	sess Session
	gen  int
	stop func()
	info Info

	width, height int
	tr            transcript
	ed            editor
	st            styles

	// op is the one run fact the UI keeps: the prompt or compaction it
	// started and has not seen settle. The session's phase cannot stand
	// in for it: it still says idle after Enter sent a prompt and before
	// the session accepted it (a second Enter must queue, not race into
	// ErrBusy), and /compact shows its line before its first event. It
	// ends with the operation's agent_settled, which carries the result,
	// or with Prompt's return when the session refused the operation.
	op       operation
	aborted  bool   // the run's last message ended aborted
	failure  string // the run's last message's error, if it ended in error
	lineDone bool   // a final line (retry failed/cancelled, aborted) was shown

	// The retry loader.
	loader     *retryStartMsg
	tickSeq    int
	now        time.Time // of the last tick or retry event
	switchedTo string
	// resetNext is the retry_waiting of the loader about to start;
	// resumeAsked: Options.Interrupted was answered.
	resetNext   *resetWaitMsg
	resumeAsked bool

	// state is the session's State as last read (readState): the status
	// line's usage, context size, window and phase come from there, not
	// from counting events. stateSeq numbers the reads, applied the
	// latest one shown, so a slow read cannot undo a newer one.
	state             session.State
	stateSeq, applied int

	hooks hookNotice // a hook failure in the status line
	wait  waitNotice // a fleet wait in the status line

	retryOff bool // auto-retry turned off (/retry off)
	models   []llm.Model
	sessions []SessionInfo
	clock    func() time.Time // for session ages only
	lastTH   int              // the transcript's height in the last frame

	// wg counts the prompts and compactions running in commands.
	wg *sync.WaitGroup

	panicked any // a panic in event handling, to report after the terminal is restored

	confirm  *confirmMsg
	ctrlC    bool // the last key was a ctrl+c on an empty editor
	quitting bool
}

// operation is a prompt or compaction the UI started (Model.op).
type operation int

const (
	opNone operation = iota
	opPrompt
	opCompact // an explicit /compact
)

// New returns a Model for opts.
func New(opts Options) *Model {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	m := &Model{opts: opts, ctx: ctx, sess: opts.Session, info: opts.Info, width: 80, height: 24, wg: &sync.WaitGroup{}}
	m.st = newStyles(opts.NoColor)
	m.tr = newTranscript(&m.st)
	m.ed = newEditor(m.st)
	m.ed.cands = m.candidates
	m.clock = time.Now
	m.tr.add(block{kind: kInfo, text: welcome})
	if m.sess != nil {
		m.tr.load(m.sess.Messages())
		m.retryOff = !m.sess.AutoRetryEnabled()
		m.state = m.sess.State()
		m.loadWarnings(m.state.LoadWarnings)
	}
	return m
}

// Init subscribes to the session and sends the first prompt.
func (m *Model) Init() tea.Cmd {
	m.subscribe()
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.opts.Host != nil {
		cmds = append(cmds, m.fetchModels())
	}
	if p := strings.TrimSpace(m.opts.FirstPrompt); p != "" {
		cmds = append(cmds, m.send(p))
	}
	return tea.Batch(cmds...)
}

func (m *Model) subscribe() {
	if m.opts.listen != nil && m.sess != nil {
		m.stop = m.opts.listen(m.sess, m.gen)
	}
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.ed.setWidth(msg.Width)
		return m, nil
	case tea.BackgroundColorMsg:
		m.tr.setDark(msg.IsDark())
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		m.ed.paste(msg.Content)
		return m, nil
	case eventMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		return m, m.event(msg.msg)
	case promptDoneMsg:
		if msg.gen != m.gen || !refused(msg.err) {
			// An accepted operation ends with its agent_settled.
			return m, nil
		}
		return m, m.finish(msg.err)
	case tickMsg:
		if msg.seq != m.tickSeq || m.loader == nil {
			return m, nil
		}
		m.now = msg.at
		return m, m.tick()
	case confirmMsg:
		m.confirm = &msg
		return m, nil
	case hookFailMsg:
		return m, m.hookFailed(msg.f)
	case hookExpireMsg:
		m.hookExpired(msg)
		return m, nil
	case noticeMsg:
		m.tr.add(block{kind: kNotice, text: msg.text})
		return m, nil
	case waitMsg:
		return m, m.waiting(msg)
	case waitExpireMsg:
		if msg.seq == m.wait.seq {
			m.wait.text = ""
		}
		return m, nil
	case panicMsg:
		m.panicked = msg.v
		return m, m.quit()
	case infoMsg:
		if msg.err != nil {
			m.tr.add(block{kind: kError, text: msg.err.Error()})
		}
		if len(msg.lines) > 0 {
			m.tr.add(block{kind: kInfo, text: strings.Join(msg.lines, "\n")})
		}
		return m, nil
	case sessionMsg:
		return m, m.switchSession(msg)
	case stateMsg:
		if msg.gen == m.gen && msg.seq > m.applied {
			m.applied, m.state, m.info.Model = msg.seq, msg.st, msg.st.Model
			m.followPhase()
		}
		return m, nil
	case modelsMsg:
		m.models = msg.models
		return m, nil
	case sessionsMsg:
		m.showSessions(msg)
		return m, nil
	case modelMsg:
		if msg.err != nil {
			m.tr.add(block{kind: kError, text: "model: " + msg.err.Error()})
		} else {
			m.info.Model = msg.m
			m.tr.add(block{kind: kInfo, text: "Model: " + modelName(msg.m)})
		}
		return m, nil
	}
	return m, nil
}

// event handles a translated session event; every one but a delta
// (which changes nothing the status line shows) then reads the session's
// state.
func (m *Model) event(msg any) tea.Cmd {
	cmd := m.handle(msg)
	if _, delta := msg.(deltaMsg); delta {
		return cmd
	}
	return tea.Batch(cmd, m.readState())
}

func (m *Model) handle(msg any) tea.Cmd {
	switch msg := msg.(type) {
	case runStartMsg:
		// A new run (also the retried one) clears a stale loader; Esc
		// interrupts it again.
		m.loader = nil
	case assistantStartMsg:
		m.tr.startAssistant()
	case deltaMsg:
		m.tr.delta(msg.text, msg.thinking)
	case messageEndMsg:
		m.messageEnd(msg.msg)
	case discardMsg:
		m.tr.discard()
	case resumedMsg:
		return m.resumed(msg)
	case toolStartMsg:
		m.tr.add(block{kind: kTool, tool: &toolCall{id: msg.id, name: msg.name, args: msg.args}})
	case toolEndMsg:
		m.tr.toolEnd(msg.id, msg.result, msg.isError)
	case resetWaitMsg:
		m.resetNext = &msg
	case retryStartMsg:
		m.failure = ""
		m.startLoader(&msg)
		m.loader = &msg
		m.now = msg.at
		if msg.switchedTo == "" {
			return m.tick()
		}
		m.switchedTo = msg.switchedTo
		m.tr.add(block{kind: kNotice, text: "Usage limit reached: switched to " + msg.switchedTo})
		return m.tick()
	case retryEndMsg:
		waited := m.loader
		m.loader = nil
		if msg.success {
			return nil
		}
		m.lineDone = true
		switch {
		case msg.cancelled && m.aborted:
			m.tr.add(block{kind: kNotice, text: "Aborted after " + session.CallsMade(msg.attempt)})
		case msg.cancelled:
			if waited != nil && waited.err != "" {
				// The loader showed the failure; cancelling the wait must
				// not take the only word of what went wrong off the screen.
				m.tr.add(block{kind: kError, text: waited.err})
			}
			m.tr.add(block{kind: kNotice, text: "Retry cancelled"})
		default:
			m.tr.add(block{kind: kError, text: "Retry failed after " + session.CallsMade(msg.attempt) + ": " + msg.finalError})
		}
	case storeErrorMsg:
		m.tr.add(block{kind: kError, text: "Session file not saved (" + msg.op + "): " + msg.err + "; the session goes on in memory"})
	case compactEndMsg:
		switch {
		case msg.done:
			m.tr.add(block{kind: kNotice, text: fmt.Sprintf("Compacted (%s): %d tokens of older messages summarised; the recent messages are kept as they were", msg.reason, msg.tokensBefore)})
		case msg.aborted:
			m.tr.add(block{kind: kNotice, text: "Compaction cancelled"})
			m.lineDone = true
		}
	case settledMsg:
		return m.finish(msg.err)
	}
	return nil
}

// readState reads the session's state for the status line: its model and
// window (learned ones included), usage, context size and phase.
func (m *Model) readState() tea.Cmd {
	if m.sess == nil {
		return nil
	}
	m.stateSeq++
	s, gen, seq := m.sess, m.gen, m.stateSeq
	return func() tea.Msg { return stateMsg{gen: gen, seq: seq, st: s.State()} }
}

func (m *Model) messageEnd(msg llm.Message) {
	switch msg.Role {
	case llm.User:
		m.tr.add(block{kind: kUser, text: msg.TextOf()})
	case llm.Assistant:
		m.tr.endAssistant(msg)
		m.aborted = msg.StopReason == llm.Aborted
		m.failure = ""
		if msg.StopReason == llm.Error {
			m.failure = msg.ErrorMessage
		}
	}
}

// finish ends the UI's operation with its result, once its last event
// has come (agent_settled, or Prompt's return when the session refused
// it): the closing line, then the prompts typed during the run. Those
// were queued in the session as follow-ups; the ones the run did not
// deliver (it failed or was aborted first) are taken back and sent next.
func (m *Model) finish(err error) tea.Cmd {
	if m.op == opNone {
		return nil
	}
	if !m.lineDone {
		switch {
		case errors.Is(err, session.ErrNothingToCompact):
			m.tr.add(block{kind: kInfo, text: "Nothing to compact yet: the conversation is all recent."})
		case m.aborted || errors.Is(err, context.Canceled):
			m.tr.add(block{kind: kNotice, text: "Operation aborted"})
		case err != nil:
			m.tr.add(block{kind: kError, text: "Error: " + err.Error()})
		case m.failure != "":
			m.tr.add(block{kind: kError, text: "Error: " + m.failure})
		}
	}
	m.op, m.loader = opNone, nil
	steer, left := m.sess.ClearQueue()
	left = append(steer, left...)
	if len(left) == 0 {
		return nil
	}
	cmd := m.send(left[0].TextOf())
	for _, q := range left[1:] {
		m.sess.FollowUp(q)
	}
	m.refreshState()
	return cmd
}

// refreshState reads the session's state now, in Update (State returns at
// once), for what must show before the next frame: the queue just typed.
func (m *Model) refreshState() {
	m.stateSeq++
	m.applied, m.state = m.stateSeq, m.sess.State()
}

// refused reports an operation the session did not accept (one was
// already running): no event, agent_settled included, will come for it.
func refused(err error) bool {
	return errors.Is(err, session.ErrBusy) || errors.Is(err, session.ErrCompacting)
}

// send starts a prompt, or queues it behind the running operation.
func (m *Model) send(text string) tea.Cmd {
	if m.busy() {
		m.sess.FollowUp(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: llm.Now()})
		m.refreshState()
		return nil
	}
	return m.start(opPrompt, func(ctx context.Context, s Session) error {
		return s.Prompt(ctx, text, session.PromptOptions{})
	})
}

// busy reports an operation the UI started that has not settled.
func (m *Model) busy() bool { return m.op != opNone }

// start begins op, which call runs in a command; its return comes back
// as promptDoneMsg.
func (m *Model) start(op operation, call func(context.Context, Session) error) tea.Cmd {
	m.op = op
	m.aborted, m.failure, m.lineDone = false, "", false
	m.switchedTo = ""
	m.endHookBursts()
	s, gen, ctx, wg := m.sess, m.gen, m.ctx, m.wg
	wg.Add(1)
	return func() tea.Msg {
		defer wg.Done()
		return promptDoneMsg{gen: gen, err: call(ctx, s)}
	}
}

// compact starts an explicit compaction.
func (m *Model) compact() tea.Cmd {
	if m.busy() {
		m.tr.add(block{kind: kInfo, text: "A run is going: /compact waits until it has settled."})
		return nil
	}
	return m.start(opCompact, func(ctx context.Context, s Session) error {
		// The summary reaches the transcript through compaction_end, the
		// result through agent_settled.
		_, err := s.Compact(ctx)
		return err
	})
}

// tick schedules the next countdown tick at the moment the shown seconds
// change.
func (m *Model) tick() tea.Cmd {
	if m.loader == nil {
		return nil
	}
	m.tickSeq++
	left := m.loader.until.Sub(m.now)
	if left <= 0 {
		return nil
	}
	wait := left % time.Second
	if wait == 0 {
		wait = time.Second
	}
	seq := m.tickSeq
	return tea.Tick(wait, func(t time.Time) tea.Msg { return tickMsg{seq: seq, at: t} })
}

// secondsLeft is the countdown's number: whole seconds, rounded up.
func (m *Model) secondsLeft() int {
	if m.loader == nil {
		return 0
	}
	left := m.loader.until.Sub(m.now)
	if left <= 0 {
		return 0
	}
	return int((left + time.Second - 1) / time.Second)
}

// switchSession installs a session from /new or /resume.
func (m *Model) switchSession(msg sessionMsg) tea.Cmd {
	if msg.err != nil {
		m.tr.add(block{kind: kError, text: msg.what + ": " + msg.err.Error()})
		return nil
	}
	if m.stop != nil {
		// Unsubscribing waits for the old subscriber, which may be blocked
		// sending to this very loop: let it drain on its own.
		go m.stop()
		m.stop = nil
	}
	m.gen++
	m.sess = msg.s
	m.info = Info{Model: msg.st.Model, SessionName: msg.st.Name}
	m.retryOff = !msg.st.AutoRetryEnabled
	m.tr.reset()
	msgs := msg.msgs
	m.tr.load(msgs)
	m.state = msg.st
	m.op, m.loader = opNone, nil
	m.endHookBursts()
	m.subscribe()
	m.tr.add(block{kind: kInfo, text: msg.what})
	m.loadWarnings(msg.st.LoadWarnings)
	return nil
}

// loadWarnings says what loading a resumed session file skipped or
// repaired: the first warning, and how many more there are (the log and
// stderr have them all).
func (m *Model) loadWarnings(ws []string) {
	if len(ws) == 0 {
		return
	}
	text := "Session file: " + ws[0]
	if len(ws) > 1 {
		text += fmt.Sprintf(" (%d more in the log)", len(ws)-1)
	}
	m.tr.add(block{kind: kNotice, text: text})
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	wasCtrlC := m.ctrlC
	m.ctrlC = false
	if m.confirm != nil {
		switch s {
		case "y", "Y":
			m.answer(true)
		case "n", "N", "esc":
			m.answer(false)
		case "ctrl+c":
			m.answer(false)
			return m.ctrlCKey(wasCtrlC)
		}
		return nil
	}
	if m.resumeQuestion() != "" {
		return m.resumeKey(s)
	}
	switch s {
	case "esc":
		m.escape()
		return nil
	case "ctrl+c":
		return m.ctrlCKey(wasCtrlC)
	case "ctrl+d":
		if m.ed.value() == "" {
			return m.quit()
		}
	case "enter":
		return m.submit()
	case "tab":
		m.ed.complete(m.completions())
		return nil
	case "ctrl+t":
		m.tr.toggle(kThinking)
		return nil
	case "ctrl+o":
		m.tr.toggle(kTool)
		return nil
	case "pgup":
		m.tr.scroll(m.transcriptHeight() - 1)
		return nil
	case "pgdown":
		m.tr.scroll(-(m.transcriptHeight() - 1))
		return nil
	case "up":
		if m.ed.onFirstLine() {
			m.ed.history(-1)
			return nil
		}
	case "down":
		if m.ed.onLastLine() {
			m.ed.history(1)
			return nil
		}
	}
	m.ed.key(k)
	return nil
}

func (m *Model) ctrlCKey(twice bool) tea.Cmd {
	if m.ed.value() != "" {
		m.ed.reset()
		return nil
	}
	if twice {
		return m.quit()
	}
	m.ctrlC = true
	return nil
}

func (m *Model) answer(yes bool) {
	select {
	case m.confirm.reply <- yes:
	default:
	}
	word := "declined"
	if yes {
		word = "allowed"
	}
	m.tr.add(block{kind: kInfo, text: fmt.Sprintf("%s: %s", m.confirm.name, word)})
	m.confirm = nil
}

// escape is Esc: cancel the retry wait while the loader shows, else
// interrupt the run or the compaction.
func (m *Model) escape() {
	switch {
	case m.loader != nil:
		m.sess.AbortRetry()
	case m.busy():
		m.sess.Abort()
	}
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.busy() && m.sess != nil {
		m.sess.Abort()
	}
	if m.stop != nil {
		go m.stop()
		m.stop = nil
	}
	return tea.Quit
}

// submit is Enter: a slash command, or a prompt (queued while a run goes).
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.ed.value())
	if text == "" {
		return nil
	}
	m.ed.push(m.ed.value())
	m.ed.reset()
	m.tr.follow()
	if strings.HasPrefix(text, "/") && !strings.Contains(strings.Fields(text)[0][1:], "/") {
		return m.command(text)
	}
	return m.send(text)
}
