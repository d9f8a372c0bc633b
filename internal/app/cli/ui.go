package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rally-agent/rally/internal/app/hooks"
	"github.com/rally-agent/rally/internal/app/tui"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

// runUI is plain `rally` (and `rally "first prompt"`): the terminal UI on
// the same settings, flags and sessions as print mode.
func runUI(cmd *cobra.Command, s streams, f *runFlags, first string) error {
	// bubbletea would fail later with a raw TTY error.
	if !isTerminal(s.in) || !isTerminal(s.out) {
		return &exitError{2, errNoTerminal}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	alerts := &tui.Alerts{}
	defer func() {
		// A UI that never started (a failed start) showed nothing.
		for _, text := range alerts.Drain() {
			fmt.Fprintln(s.err, "rally:", text)
		}
	}()
	// The log is opened before the notices that write to it; a failure
	// to open it is said through them.
	var openErr strings.Builder
	log, closeLog := newLogger(rallyHome(), &openErr, false)
	defer closeLog()
	// What the run says on stderr while the UI runs goes to the UI and
	// the log (uinotice.go), the settings' warnings included.
	us := s
	us.err = &uiNotices{alerts: alerts, log: log, after: s.err}
	if openErr.Len() > 0 {
		io.WriteString(us.err, openErr.String())
	}
	rc, err := newRunConfig(us, f)
	if err != nil {
		return err
	}
	defer rc.close()
	rc.log = log // every session of the UI logs here: rally.log is opened once
	conf := tui.NewConfirmer(rc.st.Tools.Confirm)
	uf := *f
	uf.tools, uf.ui = conf.Wrap, true
	// --verbose's copy of the log on stderr would flood the transcript:
	// under the UI the log file has it.
	uf.verbose = false
	b, err := newRPCBackend(ctx, us, uf, rc)
	if err != nil {
		return err
	}
	defer b.close()
	sess := b.current().sess
	// Hooks run as in the other modes, follow /new and /resume (swap
	// re-attaches them), get the exit grace when the UI quits, and name
	// their failures in the status line; their summary at exit goes to
	// the real stderr, after the terminal is restored.
	b.hooks = startHooks(b.current().st, b.home, b.log, s.err)
	b.hooks.alsoReport(func(e *hooks.Error) {
		alerts.HookFailed(tui.HookFailure{Hook: e.Name(), Event: e.Event, Reason: e.Reason()})
	})
	defer b.hooks.close()
	b.hooks.watch(sess)
	opts := tui.Options{
		Session:     sess,
		Host:        uiHost{b},
		Info:        tui.Info{Model: sess.State().Model, SessionName: sess.State().Name},
		FirstPrompt: first,
		NoColor:     os.Getenv("NO_COLOR") != "",
	}
	if w := b.current().interruptedWait(); w != nil {
		opts.Interrupted = &tui.InterruptedWait{Until: w.Until, Resume: func(ctx context.Context) error { return sess.ResumeWait(ctx, *w) }}
	}
	err = tui.Run(ctx, opts, tui.RunOptions{Confirmer: conf, Alerts: alerts})
	if errors.Is(err, context.Canceled) || errors.Is(err, tui.ErrInterrupted) {
		return &exitError{130, errors.New("interrupted")}
	}
	if err != nil {
		return err
	}
	return b.incomplete()
}

// uiHost gives the UI what outlives a session: it is the RPC backend
// seen through the UI's Host interface.
type uiHost struct{ b *rpcBackend }

func (h uiHost) NewSession(ctx context.Context) (tui.Session, error) {
	s, err := h.b.newSession(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (h uiHost) OpenSession(ctx context.Context, path string) (tui.Session, error) {
	f := h.b.f
	f.cont, f.file = false, path
	s, err := h.b.swap(ctx, f)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (h uiHost) Models() []llm.Model { return h.b.models() }

func (h uiHost) SetModel(ctx context.Context, _ tui.Session, m llm.Model) error {
	t, err := h.b.connect(ctx, m)
	if err != nil {
		return err
	}
	h.b.current().sess.SetModel(t)
	return nil
}

// Sessions lists this directory's sessions, newest first: the list of
// rally sessions.
func (h uiHost) Sessions() ([]tui.SessionInfo, error) {
	dir, err := sessionsDir(h.b.home, h.b.f.sessionDir)
	if err != nil {
		return nil, err
	}
	list, err := listSessions(dir, maxSessionList)
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, len(list))
	for i, s := range list {
		out[i] = tui.SessionInfo{Path: s.Path, Modified: s.Modified, Messages: s.Messages, FirstPrompt: s.FirstPrompt}
		if s.Err != nil {
			out[i].FirstPrompt = "(unreadable: " + s.Err.Error() + ")"
		}
	}
	return out, nil
}

// Settings describes the settings files in use and the retry settings in
// effect.
func (h uiHost) Settings() []string {
	var lines []string
	if src, err := settingsSources(); err == nil {
		for _, l := range []settings.Source{src.Global, src.Project} {
			if l.Path == "" {
				continue
			}
			state := "not present"
			if _, err := os.Stat(l.Path); err == nil {
				state = "in use"
			}
			lines = append(lines, fmt.Sprintf("Settings file %s (%s)", l.Path, state))
		}
	}
	conf := h.b.rc
	r := conf.st.Retry
	pol := conf.st.RetryPolicy(conf.target.Provider)
	lines = append(lines,
		fmt.Sprintf("retry.enabled %v · maxRetries %d (for %s) · baseDelayMs %d · maxDelayMs %d · jitter %g · streaming %s",
			r.Enabled, pol.MaxRetries, conf.target.Provider, r.BaseDelayMs, r.MaxDelayMs, r.Jitter, r.Streaming),
		fmt.Sprintf("retry.fallbackModels %v · tools.confirm %v", r.FallbackModels, conf.st.Tools.Confirm))
	return lines
}
