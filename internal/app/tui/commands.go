package tui

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/llm"
)

// commands are the slash commands, in the order completion lists them.
var commands = []struct{ name, help string }{
	{"/retry", "on|off: automatic retry of failed model calls"},
	{"/model", "[N|provider/id]: list the models, or switch"},
	{"/new", "start a fresh session"},
	{"/resume", "[N]: list this directory's sessions, or open one"},
	{"/compact", "summarise the older messages now"},
	{"/settings", "the settings files in use and the retry settings"},
	{"/session", "this session's file, id, messages and retries"},
	{"/help", "this list"},
	{"/quit", "leave rally"},
}

// errNoHost is the answer of the commands that need the CLI's host.
var errNoHost = errors.New("not available in this UI")

// modelsMsg and sessionsMsg deliver lists fetched off the update loop.
type modelsMsg struct{ models []llm.Model }

type sessionsMsg struct {
	list []SessionInfo
	err  error
	show bool
}

// command runs a slash command.
func (m *Model) command(text string) tea.Cmd {
	f := strings.Fields(text)
	name, args := f[0], f[1:]
	arg := strings.Join(args, " ")
	host := m.opts.Host
	switch name {
	case "/quit", "/exit":
		return m.quit()
	case "/retry":
		switch arg {
		case "on", "off":
			m.sess.SetAutoRetryEnabled(arg == "on")
			m.retryOff = arg == "off"
			m.tr.add(block{kind: kInfo, text: "Auto-retry is " + arg})
		case "":
			state := "on"
			if m.retryOff {
				state = "off"
			}
			m.tr.add(block{kind: kInfo, text: "Auto-retry is " + state + " (/retry on|off)"})
		default:
			m.tr.add(block{kind: kError, text: "usage: /retry on|off"})
		}
		return nil
	case "/help":
		lines := make([]string, len(commands))
		for i, c := range commands {
			lines[i] = c.name + " " + c.help
		}
		m.tr.add(block{kind: kInfo, text: strings.Join(lines, "\n")})
		return nil
	case "/compact":
		return m.compact()
	case "/session":
		return m.sessionInfo()
	case "/settings":
		if host == nil {
			return m.fail("/settings", errNoHost)
		}
		return func() tea.Msg { return infoMsg{lines: host.Settings()} }
	case "/new":
		if host == nil {
			return m.fail("/new", errNoHost)
		}
		if m.busy() {
			return m.fail("/new", errors.New("a run is going: press esc first"))
		}
		ctx := m.ctx
		return func() tea.Msg { return opened(host.NewSession(ctx))("New session") }
	case "/resume":
		if host == nil {
			return m.fail("/resume", errNoHost)
		}
		if arg == "" {
			return func() tea.Msg {
				l, err := host.Sessions()
				return sessionsMsg{list: l, err: err, show: true}
			}
		}
		return m.resume(arg)
	case "/model":
		if host == nil {
			return m.fail("/model", errNoHost)
		}
		if arg == "" {
			m.showModels()
			return m.fetchModels()
		}
		return m.setModel(arg)
	}
	m.tr.add(block{kind: kError, text: fmt.Sprintf("unknown command %s (try %s)", name, names())})
	return nil
}

func names() string {
	var n []string
	for _, c := range commands {
		n = append(n, c.name)
	}
	return strings.Join(n, " ")
}

func (m *Model) fail(what string, err error) tea.Cmd {
	m.tr.add(block{kind: kError, text: what + ": " + err.Error()})
	return nil
}

func (m *Model) sessionInfo() tea.Cmd {
	s := m.sess
	return func() tea.Msg {
		st := s.State()
		file := st.SessionFile
		if file == "" {
			file = "(not saved)"
		}
		lines := []string{"Session file: " + file}
		if st.SessionID != "" {
			lines = append(lines, "Session id: "+st.SessionID)
		}
		if st.Name != "" {
			lines = append(lines, "Name: "+st.Name)
		}
		lines = append(lines, fmt.Sprintf("Messages: %d", st.MessageCount), fmt.Sprintf("Retries so far: %d", st.Retries))
		return infoMsg{lines: lines}
	}
}

func (m *Model) fetchModels() tea.Cmd {
	host := m.opts.Host
	return func() tea.Msg { return modelsMsg{models: host.Models()} }
}

func (m *Model) showModels() {
	if len(m.models) == 0 {
		m.tr.add(block{kind: kInfo, text: "Loading the models… (/model again to list them)"})
		return
	}
	lines := []string{"Models (/model N or /model provider/id):"}
	for i, md := range m.models {
		mark := " "
		if md.Provider == m.info.Model.Provider && md.ID == m.info.Model.ID {
			mark = "*"
		}
		win := ""
		if md.ContextWindow > 0 {
			win = " · " + tokens(md.ContextWindow) + " ctx"
		}
		lines = append(lines, fmt.Sprintf("%s %2d  %s%s", mark, i+1, modelName(md), win))
	}
	m.tr.add(block{kind: kInfo, text: strings.Join(lines, "\n")})
}

func (m *Model) setModel(arg string) tea.Cmd {
	var pick *llm.Model
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(m.models) {
		pick = &m.models[n-1]
	}
	for i := range m.models {
		if pick == nil && modelName(m.models[i]) == arg {
			pick = &m.models[i]
		}
	}
	if pick == nil {
		return m.fail("/model", fmt.Errorf("no model %q (/model lists them)", arg))
	}
	host, s, ctx, md := m.opts.Host, m.sess, m.ctx, *pick
	return func() tea.Msg { return modelMsg{m: md, err: host.SetModel(ctx, s, md)} }
}

func (m *Model) resume(arg string) tea.Cmd {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > len(m.sessions) {
		return m.fail("/resume", fmt.Errorf("no session %q (/resume lists them)", arg))
	}
	if m.busy() {
		return m.fail("/resume", errors.New("a run is going: press esc first"))
	}
	host, ctx, info := m.opts.Host, m.ctx, m.sessions[n-1]
	return func() tea.Msg { return opened(host.OpenSession(ctx, info.Path))("Resumed " + info.Path) }
}

// opened reads a freshly opened session for sessionMsg (in a command: the
// reads take the session's lock).
func opened(s Session, err error) func(what string) sessionMsg {
	return func(what string) sessionMsg {
		if err != nil {
			return sessionMsg{err: err, what: what}
		}
		return sessionMsg{s: s, st: s.State(), msgs: s.Messages(), what: what}
	}
}

func (m *Model) showSessions(msg sessionsMsg) {
	if msg.err != nil {
		m.tr.add(block{kind: kError, text: "/resume: " + msg.err.Error()})
		return
	}
	m.sessions = msg.list
	if !msg.show {
		return
	}
	if len(msg.list) == 0 {
		m.tr.add(block{kind: kInfo, text: "No saved sessions in this directory."})
		return
	}
	lines := []string{"Sessions, newest first (/resume N):"}
	for i, s := range msg.list {
		lines = append(lines, fmt.Sprintf("%2d  %-8s %3d msgs  %s", i+1, Age(m.clock().Sub(s.Modified)), s.Messages, clipLine(s.FirstPrompt, 60)))
	}
	m.tr.add(block{kind: kInfo, text: strings.Join(lines, "\n")})
}

// Age is how long ago a session was written, as /resume and rally
// sessions list it: 5m ago, 3h ago.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// completions are what Tab may complete the input to.
func (m *Model) completions() []string { return m.candidates(m.ed.value()) }

func (m *Model) candidates(in string) []string {
	if !strings.HasPrefix(in, "/") || strings.Contains(in, "\n") {
		return nil
	}
	var out []string
	if name, rest, ok := strings.Cut(in, " "); ok {
		var opts []string
		switch name {
		case "/retry":
			opts = []string{"on", "off"}
		case "/model":
			for _, md := range m.models {
				opts = append(opts, modelName(md))
			}
		}
		for _, o := range opts {
			if strings.HasPrefix(o, rest) && o != rest {
				out = append(out, name+" "+o)
			}
		}
		return out
	}
	for _, c := range commands {
		if strings.HasPrefix(c.name, in) {
			out = append(out, c.name)
		}
	}
	return out
}
