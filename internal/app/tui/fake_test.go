package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeSession records what the UI asked of it. Prompt returns promptErr
// at once: the tests send the run's events themselves.
type fakeSession struct {
	mu          sync.Mutex
	prompts     []string
	aborts      int
	abortRetry  int
	compacts    int
	autoRetry   bool
	promptErr   error
	messages    []llm.Message
	sessionFile string
	model       llm.Model
	warnings    []string // LoadWarnings
	// What State reports beyond the above.
	usage         llm.Usage
	contextTokens int
	phase         session.Phase
	queue         []llm.Message // FollowUp's
}

func newFake() *fakeSession { return &fakeSession{autoRetry: true} }

func (f *fakeSession) Prompt(_ context.Context, text string, _ session.PromptOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, text)
	return f.promptErr
}

func (f *fakeSession) Compact(context.Context) (*session.CompactionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compacts++
	return nil, f.promptErr
}

func (f *fakeSession) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborts++
}

func (f *fakeSession) AbortRetry() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abortRetry++
}

func (f *fakeSession) SetAutoRetryEnabled(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.autoRetry = on
}

func (f *fakeSession) AutoRetryEnabled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.autoRetry
}

func (f *fakeSession) State() session.State {
	auto := f.AutoRetryEnabled()
	f.mu.Lock()
	defer f.mu.Unlock()
	return session.State{Model: f.model, SessionFile: f.sessionFile, SessionID: "s1", MessageCount: len(f.messages), AutoRetryEnabled: auto, LoadWarnings: f.warnings,
		Usage: f.usage, ContextTokens: f.contextTokens, Phase: f.phase, Queue: append([]llm.Message(nil), f.queue...), PendingCount: len(f.queue)}
}

func (f *fakeSession) Messages() []llm.Message { return f.messages }

func (f *fakeSession) FollowUp(m llm.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, m)
}

func (f *fakeSession) ClearQueue() (steering, followUp []llm.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queue
	f.queue = nil
	return nil, q
}

// testModel is a Model with a fake session at 80×20.
func testModel(t *testing.T, opts Options) (*Model, *fakeSession) {
	t.Helper()
	f := newFake()
	if opts.Session == nil {
		opts.Session = f
	}
	if opts.Info.Model.ID == "" {
		opts.Info.Model = llm.Model{Provider: "fake-llm", ID: "fake-model", ContextWindow: 128000}
	}
	if f.model.ID == "" {
		f.model = opts.Info.Model // what the session says, as a real one would
	}
	opts.NoColor = true
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	return m, f
}

// ev delivers a translated session event of the current generation.
func ev(m *Model, msg any) tea.Cmd {
	_, cmd := m.Update(eventMsg{gen: m.gen, msg: msg})
	return cmd
}

func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

// namedKeys are the keys tests name rather than type.
var namedKeys = map[string]tea.KeyPressMsg{
	"esc":       {Code: tea.KeyEscape},
	"enter":     {Code: tea.KeyEnter},
	"tab":       {Code: tea.KeyTab},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"pgup":      {Code: tea.KeyPgUp},
	"pgdown":    {Code: tea.KeyPgDown},
	"alt+enter": {Code: tea.KeyEnter, Mod: tea.ModAlt},
}

func keyMsg(k string) tea.KeyPressMsg {
	if m, ok := namedKeys[k]; ok {
		return m
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText types s key by key.
func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// screen is the frame as plain text, trailing spaces and leading blank
// lines removed.
func screen(m *Model) string {
	lines := strings.Split(ansi.Strip(m.render()), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// run executes a command and the commands its messages lead to, feeding
// the UI's own messages back into the model. Ticks and cursor blinks are
// left out (time is the test's): a command of a batch that does not
// return within 100 ms is one of those and is dropped.
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if c == nil {
				continue
			}
			got := make(chan tea.Msg, 1)
			go func() { got <- c() }()
			select {
			case msg := <-got:
				run(m, func() tea.Msg { return msg })
			case <-time.After(100 * time.Millisecond):
			}
		}
	case promptDoneMsg, infoMsg, sessionMsg, modelsMsg, sessionsMsg, modelMsg, stateMsg:
		_, next := m.Update(msg)
		run(m, next)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
