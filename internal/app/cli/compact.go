package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newCompactCmd(s streams) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Summarise the older part of the latest session now",
		Long: `Compacts a session on demand: the current model summarises the older part of
the conversation (goal, decisions, files touched, what was done, open tasks),
the most recent turns are kept whole, and a compaction entry is appended to the
session file. Resuming the session then sends the summary and the kept turns.
Without --session it compacts the latest session of this directory.`,
		Example: `  rally compact
  rally compact --session ~/.rally/sessions/--home-me-proj--/2026-11-30T05-00-00-000Z_<id>.jsonl
  rally compact --provider sim --model sim-tiny`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if f.file == "" {
				f.cont, f.mustResume = true, true
			}
			ctx, stop := withStopSignals(cmd.Context())
			defer stop()
			defer func() { err = interrupted(ctx, err) }()
			rc, err := newRunConfig(s, &f)
			if err != nil {
				return err
			}
			defer rc.close()
			env, err := newRunEnv(ctx, s, &f, rc)
			if err != nil {
				return err
			}
			defer env.close()
			if len(env.sess.Messages()) == 0 {
				return &exitError{1, errors.New("compact: no session to compact here (start one with rally -p)")}
			}
			result, err := env.sess.Compact(ctx)
			if err != nil {
				return runFailed(err)
			}
			fmt.Fprintf(s.out, "compacted %s: %d tokens before\n\n%s\n", env.journal.Path(), result.TokensBefore, result.Summary)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.file, "session", "", "the session file to compact (default: the latest of this directory)")
	fl.StringVar(&f.sessionDir, "session-dir", "", "directory for session files (default $RALLY_HOME/sessions/<cwd>)")
	fl.StringVar(&f.provider, "provider", "", "provider that writes the summary")
	fl.StringVar(&f.model, "model", "", "model that writes the summary")
	fl.StringVar(&f.api, "api", "", "wire API, for a provider given by --base-url")
	fl.StringVar(&f.baseURL, "base-url", "", "base URL of the provider")
	fl.BoolVar(&f.verbose, "verbose", false, "also log to stderr")
	return cmd
}
