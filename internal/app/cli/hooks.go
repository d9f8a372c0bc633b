package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/redact"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/internal/app/hooks"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

// newHookRunner is the one place a rally process builds its hook runner
// from the settings: their hooks, grace and bound, in an environment
// without the key variables the tools go without (tools.go; there is no
// allowEnv for hooks).
func newHookRunner(st *settings.Settings, home string, log *slog.Logger, onFailure func(*hooks.Error)) *hooks.Runner {
	cfg := hooks.FromSettings(st)
	// A broken auth.json is refused where the run loads it; here it only
	// adds names and keys.
	file, err := auth.Load(auth.Path(home))
	if err != nil {
		file = &auth.File{}
	}
	environ := os.Environ()
	names, keys := secrets(st, file, environ)
	cfg.Env = scrubEnv(environ, names, keys, nil)
	cfg.Redact = func(s string) string { return redact.Secrets(s, keys...) }
	cfg.Log, cfg.OnFailure = log, onFailure
	return hooks.New(cfg)
}

// hookRun is the hook runner of a print, json or rpc run, and the session
// it watches. Without hooks in the settings it does nothing.
type hookRun struct {
	r      *hooks.Runner
	stderr io.Writer

	mu       sync.Mutex
	stop     func()
	first    map[int]*hooks.Error // each hook's first failure
	failures int
	report   func(*hooks.Error) // also told of each failure (the UI's status line)
}

func startHooks(st *settings.Settings, home string, log *slog.Logger, stderr io.Writer) *hookRun {
	h := &hookRun{stderr: stderr, first: map[int]*hooks.Error{}}
	if len(st.Hooks) > 0 {
		h.r = newHookRunner(st, home, log, h.failed)
	}
	return h
}

func (h *hookRun) failed(err *hooks.Error) {
	h.mu.Lock()
	h.failures++
	if h.first[err.Hook] == nil {
		h.first[err.Hook] = err
	}
	report := h.report
	h.mu.Unlock()
	if report != nil {
		report(err)
	}
}

// alsoReport passes every failure to f as well, on the runner's goroutine
// (so f must not block for long). Call it before watch.
func (h *hookRun) alsoReport(f func(*hooks.Error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.report = f
}

// watch makes s the session whose events run the hooks (RPC new_session
// replaces it).
func (h *hookRun) watch(s *session.Session) {
	if h == nil || h.r == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil {
		h.stop()
	}
	h.stop = h.r.Watch(s)
}

// close takes the last events, waits for the hooks at most the grace, and
// says on stderr, once per hook, which ones failed (the log has each
// failure).
func (h *hookRun) close() {
	if h == nil || h.r == nil {
		return
	}
	h.mu.Lock()
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
	h.mu.Unlock()
	h.r.Close(context.Background())
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range slices.Sorted(func(yield func(int) bool) {
		for i := range h.first {
			if !yield(i) {
				return
			}
		}
	}) {
		fmt.Fprintf(h.stderr, "rally: %v\n", h.first[i])
	}
	if h.failures > len(h.first) {
		fmt.Fprintf(h.stderr, "rally: %d hook failure(s) in all; the log has each one\n", h.failures)
	}
}

func newHooksCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Check the hooks of the settings",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{2, fmt.Errorf("hooks: unknown command %q (have: test)", args[0])}
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newHooksTestCmd(s))
	return cmd
}

func newHooksTestCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "test EVENT",
		Short: "Run the hooks of an event type once, with a sample event",
		Long: `Runs every hook whose "on" lists EVENT, one after the other, with a sample
event of that type on stdin and the environment a real run gives it
(RALLY_EVENT, RALLY_SESSION_ID=hooks-test, RALLY_SESSION_FILE empty,
RALLY_EVENT_TIME; no provider key variables). Prints the event, then for each
hook what ran, its exit status, how long it took and the end of its output.
The sample auto_retry_end is a failed chain (success false).

Exits 1 if a hook failed, 2 for an unknown event type or invalid settings.`,
		Example: `  rally hooks test auto_retry_end
  rally hooks test agent_settled`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{2, errors.New("hooks test: give one event type, e.g. rally hooks test auto_retry_end")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			e, ok := hooks.Sample(args[0])
			if !ok {
				return &exitError{2, fmt.Errorf("hooks test: unknown event type %q (one of %s)", args[0], strings.Join(hooks.Types(), ", "))}
			}
			st, err := loadSettings(s)
			if err != nil {
				return err
			}
			home := settings.Home(userHome(), os.Getenv)
			log, closeLog := newLogger(home, s.err, false)
			defer closeLog()
			r := newHookRunner(st, home, log, nil)
			defer r.Close(context.Background())
			fmt.Fprintf(s.out, "event: %s", hooks.Encode(e))
			results := r.Test(cmd.Context(), hooks.Source{ID: "hooks-test"}, e)
			if len(results) == 0 {
				fmt.Fprintf(s.out, "no hook runs on %s\n", args[0])
				return nil
			}
			failed := 0
			for _, res := range results {
				printResult(s.out, res)
				if res.Err != nil {
					failed++
				}
			}
			if failed > 0 {
				return &exitError{1, fmt.Errorf("hooks test: %d of %d hook(s) failed", failed, len(results))}
			}
			return nil
		},
	}
}

// printResult writes one hook run: what ran, how it ended, how long it
// took, then the end of its output, indented.
func printResult(w io.Writer, res hooks.Result) {
	status := fmt.Sprintf("exit %d", res.ExitCode)
	if res.Err != nil {
		status = "failed: " + errors.Unwrap(res.Err).Error()
	}
	fmt.Fprintf(w, "hooks[%d] %s: %s in %s\n", res.Hook, quoteArgv(res.Command), status, res.Duration.Round(time.Millisecond))
	for _, out := range []struct{ name, text string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if out.text == "" {
			continue
		}
		fmt.Fprintf(w, "  %s:\n", out.name)
		for line := range strings.Lines(out.text) {
			fmt.Fprintf(w, "    %s", strings.TrimSuffix(line, "\n")+"\n")
		}
	}
}

// quoteArgv shows a command the way a shell user would type it.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
