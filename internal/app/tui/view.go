package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
)

// styles are the UI's colours. Under NO_COLOR every style is plain, and
// bubbletea itself downsamples colours to what the terminal supports.
type styles struct {
	noColor                                bool
	user, thinking, toolName, result, info lipgloss.Style
	notice, err, status, loader, queued    lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		return styles{noColor: true}
	}
	dim := lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	return styles{
		user:     lipgloss.NewStyle().Bold(true),
		thinking: dim.Italic(true),
		toolName: lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true),
		result:   dim,
		info:     dim,
		notice:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		err:      lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		status:   lipgloss.NewStyle().Reverse(true),
		loader:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
		queued:   dim,
	}
}

// View draws the transcript, the loader, the queue, the editor and the
// status line, bottom-aligned to the terminal.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "rally"
	return v
}

// render is the frame as text (View without the terminal settings).
func (m *Model) render() string {
	if m.quitting {
		return ""
	}
	w := max(m.width, 20)
	bottom := m.bottom(w)
	th := max(1, m.height-lipgloss.Height(bottom))
	m.lastTH = th
	lines := m.tr.window(w, th)
	var b strings.Builder
	for i := len(lines); i < th; i++ {
		b.WriteByte('\n')
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(bottom)
	return b.String()
}

// bottom is everything under the transcript.
func (m *Model) bottom(w int) string {
	var parts []string
	if l := m.loaderLine(w); l != "" {
		parts = append(parts, m.st.loader.Render(l))
		if m.loader.err != "" {
			parts = append(parts, m.st.info.Render(clipLine("  "+m.loader.err, w)))
		}
	} else if m.op == opCompact || (m.busy() && m.state.Phase.Kind == session.PhaseCompacting) {
		parts = append(parts, m.st.loader.Render("Compacting… (esc to cancel)"))
	} else if m.busy() {
		parts = append(parts, m.st.info.Render("Working… (esc to interrupt)"))
	}
	for _, q := range m.state.Queue {
		parts = append(parts, m.st.queued.Render(clipLine("queued: "+q.TextOf(), w)))
	}
	if c := m.confirm; c != nil {
		parts = append(parts, m.st.notice.Render(clipLine(fmt.Sprintf("Run %s %s? [y/n]", c.name, c.args), w)))
	} else if q := m.resumeQuestion(); q != "" {
		parts = append(parts, m.st.notice.Render(clipLine(q, w)))
	} else if m.ctrlC {
		parts = append(parts, m.st.info.Render("Press ctrl+c again to quit"))
	}
	if hint := m.ed.hint; hint != "" {
		parts = append(parts, m.st.info.Render(clipLine(hint, w)))
	}
	parts = append(parts, m.ed.view())
	parts = append(parts, m.st.status.Render(padRight(m.statusLine(w), w)))
	return strings.Join(parts, "\n")
}

// transcriptHeight is the transcript's height in the last frame.
func (m *Model) transcriptHeight() int { return max(1, m.lastTH) }

// loaderLine is the retry loader: "Retrying (2/3) in 4s… (esc to cancel)",
// shortened to fit w columns so that "esc to cancel" always shows whole.
func (m *Model) loaderLine(w int) string {
	l := m.loader
	if l == nil {
		return ""
	}
	if l.reset {
		return m.resetLoaderLine(w)
	}
	n, left := fmt.Sprintf("%d/%d", l.attempt, l.max), m.secondsLeft()
	forms := []string{
		fmt.Sprintf("Retrying (%s) in %ds… (esc to cancel)", n, left),
		fmt.Sprintf("Retry %s in %ds… esc to cancel", n, left),
		fmt.Sprintf("%s in %ds… esc to cancel", n, left),
	}
	if l.class == "usage_limit" && l.switchedTo == "" {
		forms = append([]string{fmt.Sprintf("Waiting for the usage limit to reset (%s): %ds… (esc to cancel)", n, left),
			fmt.Sprintf("Usage limit (%s): %ds… esc to cancel", n, left)}, forms[1:]...)
	}
	for _, f := range forms {
		if lipgloss.Width(f) <= w {
			return f
		}
	}
	return "esc to cancel"
}

// statusLine is provider/model · context used/window · cost · retry state
// · session name. On a narrow terminal the session name goes first, then
// the cost: the model and the retry state always show. A hook failure
// (hookNotice) or a fleet wait (waitNotice) takes the session name's
// place while it shows; it and the retry state always show, so the model
// goes too if need be.
func (m *Model) statusLine(w int) string {
	mod := m.info.Model
	ctx := "ctx " + tokens(m.state.ContextTokens)
	if mod.ContextWindow > 0 {
		ctx += "/" + tokens(mod.ContextWindow)
	}
	cost := fmt.Sprintf("$%.4f", m.state.Usage.Cost.Total)
	name, retry := modelName(mod), m.retryState()
	cands := [][]string{
		{name, ctx, cost, retry, m.info.SessionName},
		{name, ctx, cost, retry},
		{name, ctx, retry},
		{name, retry},
	}
	n := m.hooks.text
	if w := m.wait.text; w != "" && n != "" {
		n = w + " · " + n
	} else if w != "" {
		n = w
	}
	if n != "" {
		cands = [][]string{{name, ctx, cost, retry, n}, {name, ctx, retry, n}, {name, retry, n}, {retry, n}}
	}
	for _, parts := range cands {
		if parts[len(parts)-1] == "" {
			continue
		}
		// Model and session names come from settings and session files.
		if line := termsafe.String(strings.Join(parts, " · ")); lipgloss.Width(line) < w {
			return " " + line
		}
	}
	return clipLine(termsafe.String(strings.Join(cands[len(cands)-1], " · ")), w)
}

func (m *Model) retryState() string {
	switch l := m.loader; {
	case l != nil && l.reset:
		return m.resetState()
	case l != nil && l.class == "usage_limit" && l.switchedTo == "":
		return fmt.Sprintf("waiting for a usage-limit reset %d/%d", l.attempt, l.max)
	case l != nil:
		return fmt.Sprintf("retrying %d/%d", l.attempt, l.max)
	}
	switch p := m.state.Phase; p.Kind {
	case session.PhaseStreaming:
		return "streaming"
	case session.PhaseCompacting:
		return "compacting"
	case session.PhaseToolRunning:
		return "running " + p.Tool
	}
	switch {
	case m.switchedTo != "":
		return "switched to " + m.switchedTo
	case m.retryOff:
		return "retry off"
	}
	return "idle"
}

func modelName(m llm.Model) string {
	if m.Provider == "" {
		return m.ID
	}
	return m.Provider + "/" + m.ID
}

// tokens writes a token count briefly: 950, 12.3k, 1.05M.
func tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1000000:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), "0"), ".") + "k"
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(n)/1e6), "0"), ".") + "M"
}

func padRight(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
