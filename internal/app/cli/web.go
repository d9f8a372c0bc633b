package cli

import (
	"context"
	"fmt"
	"github.com/rally-agent/rally/session/journal"
	"os"
	"os/signal"
	"syscall"

	"github.com/rally-agent/rally/internal/app/web"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

func newWebCmd(s streams) *cobra.Command {
	var listen, sessionDir string
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve the web console: settings form and session timelines",
		Long: `Serves a local web console for this project: a form for every setting
(global and project files, with defaults and where each value comes from), and
the project's session files as transcripts with a timeline of model calls,
failures, waits before retries and compactions.

It listens on a loopback address only and prints a URL with a random access
token; the first visit trades it for a cookie that only the console's own
secret path receives, so no other local server ever gets it. Other origins
cannot post to it, and its pages run no script. A change of hooks (commands
rally runs) needs a code that rally web prints here. API keys are never shown or accepted: use
rally auth for credentials. Stop it with Ctrl-C.`,
		Example: `  rally web
  rally web --listen 127.0.0.1:0          # any free port`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runWeb(ctx, s, listen, sessionDir)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7878", "loopback address to listen on (port 0 picks a free port)")
	cmd.Flags().StringVar(&sessionDir, "session-dir", "", "directory of the session files (default $RALLY_HOME/sessions/<cwd>)")
	return cmd
}

func runWeb(ctx context.Context, s streams, listen, sessionDir string) error {
	src, err := settingsSources()
	if err != nil {
		return err
	}
	if sessionDir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("web: %w", err)
		}
		sessionDir = journal.Dir(settings.Home(userHome(), os.Getenv), cwd)
	}
	// The keys the console must never show: those the tools hide. Broken
	// settings mean the defaults' key variables (the form reports them).
	st, _, err := settings.Load(src)
	if err != nil {
		st = settings.Default()
	}
	_, keys := runSecrets(settings.Home(userHome(), os.Getenv), st, os.Environ())
	srv, err := web.New(web.Config{Settings: src, SessionDir: sessionDir, Keys: keys, Terminal: s.err})
	if err != nil {
		return err
	}
	ln, err := web.Listen(ctx, listen)
	if err != nil {
		return &exitError{2, err}
	}
	fmt.Fprintf(s.out, "rally web: open %s\n", srv.URL(ln.Addr()))
	return srv.Serve(ctx, ln)
}
