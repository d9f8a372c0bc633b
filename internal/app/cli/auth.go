package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/telemetry"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

func newAuthCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Manage API keys: several per provider, rotated on usage limits",
		Long: `rally keeps API keys in $RALLY_HOME/auth.json (mode 0600; a file others can
read is refused). A provider may have several; the environment variables
(RALLY_API_KEY, and each provider's apiKeyEnv such as OPENAI_API_KEY) count
as credentials too, tried before the file's.

When a key hits a usage limit, rally marks it as blocked until the reset the
provider named (1 h when it named none), in $RALLY_HOME/auth-marks.json, which
every rally process on the machine reads, and retries at once with the next
unblocked key, then with retry.fallbackModels. The README's "Credentials,
usage limits and fallback models" has the whole story.`,
		Example: `  printf %s "$KEY" | rally auth add openai --id work --key -
  rally auth add openai --id personal --key-env OPENAI_PERSONAL_KEY --label "own account"
  rally auth list
  rally auth remove openai personal`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newAuthAddCmd(s), newAuthListCmd(s), newAuthRemoveCmd(s))
	return cmd
}

func newAuthAddCmd(s streams) *cobra.Command {
	var c auth.Credential
	cmd := &cobra.Command{
		Use:   "add PROVIDER --id ID (--key KEY | --key-env VAR)",
		Short: "Add an API key for a provider",
		Long: `Adds a credential to $RALLY_HOME/auth.json. PROVIDER is a provider name from
settings (openai, anthropic, google, openrouter, groq, …) or the name you give
with --provider for a one-run provider (--provider NAME --api … --base-url …).

--key - reads the key from stdin, which keeps it out of your shell history
and the process list. --key-env stores only the name of a variable that
holds the key. Credentials are tried in the order they were added.`,
		Example: `  printf %s "$KEY" | rally auth add openai --id work --key -
  rally auth add anthropic --id team --key-env ANTHROPIC_TEAM_KEY --label "team plan"
  rally auth add vllm --id gpu1 --key - < ~/.secrets/vllm   # then: rally --provider vllm --base-url …`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("key") == cmd.Flags().Changed("key-env") {
				return &exitError{2, errors.New("auth add: give exactly one of --key and --key-env")}
			}
			if c.Key == "-" {
				k, err := readKey(s.in)
				if err != nil {
					return &exitError{2, err}
				}
				c.Key = k
			}
			home := rallyHome()
			err := auth.Update(cmd.Context(), auth.Path(home), func(f *auth.File) error { return f.Add(args[0], c) })
			if err != nil {
				return &exitError{2, err}
			}
			fmt.Fprintf(s.out, "added %s %s (%s) to %s\n", args[0], c.ID, c.Source(), auth.Path(home))
			if st, err := loadSettings(s); err == nil {
				if _, ok := st.Providers[args[0]]; !ok {
					fmt.Fprintf(s.err, "rally: %s is not a provider in settings; use it with --provider %s --api … --base-url …, or define providers.%s\n", args[0], args[0], args[0])
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&c.ID, "id", "", "a name for this credential, unique within the provider (required)")
	cmd.Flags().StringVar(&c.Key, "key", "", `the API key, or "-" to read it from stdin`)
	cmd.Flags().StringVar(&c.KeyEnv, "key-env", "", "name of an environment variable holding the key")
	cmd.Flags().StringVar(&c.Label, "label", "", "a note shown by rally auth list")
	cmd.MarkFlagRequired("id")
	return cmd
}

// readKey reads a key from stdin: the first line, trimmed.
func readKey(in io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(in, 64<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("auth add: read key from stdin: %w", err)
	}
	k := strings.TrimSpace(line)
	if k == "" {
		return "", errors.New("auth add: --key -: stdin is empty")
	}
	return k, nil
}

func newAuthRemoveCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "remove PROVIDER ID",
		Short: "Remove an API key from auth.json",
		Long: `Removes the credential ID of PROVIDER from $RALLY_HOME/auth.json. Credentials
from environment variables (ids starting with env:) are removed by unsetting
the variable.`,
		Example: `  rally auth remove openai personal`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := auth.Path(rallyHome())
			err := auth.Update(cmd.Context(), path, func(f *auth.File) error { return f.Remove(args[0], args[1]) })
			if err != nil {
				return &exitError{2, err}
			}
			fmt.Fprintf(s.out, "removed %s %s from %s\n", args[0], args[1], path)
			return nil
		},
	}
}

func newAuthListCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List credentials (never their keys) and which are blocked",
		Long: `Lists every credential rally can use: those in $RALLY_HOME/auth.json and
those in environment variables, in the order a session tries them. For each it
shows the provider, id, label, where the key comes from, the last four
characters of the key, "blocked until <time>" when a usage limit blocks it, and
when the provider said that limit resets (local time and zone, "-" when it did
not say). The key itself is never printed.`,
		Example: `  rally auth list`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := loadSettings(s)
			if err != nil {
				return err
			}
			return listAuth(cmd.Context(), s.out, rallyHome(), st, os.Getenv, s.clock())
		},
	}
}

// listAuth writes the table of rally auth list.
func listAuth(ctx context.Context, w io.Writer, home string, st *settings.Settings, getenv func(string) string, now time.Time) error {
	file, err := auth.Load(auth.Path(home))
	if err != nil {
		return &exitError{2, err}
	}
	marks, err := listMarks(ctx, w, home, st, getenv, now)
	if err != nil {
		fmt.Fprintln(w, "warning:", err)
	}
	// RALLY_API_KEY belongs to whichever provider a run uses; it is listed
	// under the one a run without flags would pick.
	rallyKeyFor := "*"
	if t, err := st.Resolve(settings.Overrides{}, getenv); err == nil && t.Provider != settings.Sim {
		rallyKeyFor = t.Provider
	}
	names := map[string]bool{}
	for p := range file.Providers {
		names[p] = true
	}
	for p, cfg := range st.Providers {
		if cfg.APIKeyEnv != "" && getenv(cfg.APIKeyEnv) != "" {
			names[p] = true
		}
	}
	if getenv(settings.KeyEnv) != "" {
		names[rallyKeyFor] = true
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tID\tLABEL\tSOURCE\tKEY\tSTATUS\tRESETS")
	rows := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	}) {
		var env []string
		if p == rallyKeyFor {
			env = append(env, settings.KeyEnv)
		}
		if v := st.Providers[p].APIKeyEnv; v != "" {
			env = append(env, v)
		}
		creds := file.Pool(p, env, getenv)
		for _, c := range file.Providers[p] {
			if c.Secret(getenv) == "" { // Pool leaves out keys that are not set
				creds = append(creds, c)
			}
		}
		var ms []auth.Mark
		for _, m := range marks {
			if m.Provider == p {
				ms = append(ms, m)
			}
		}
		for _, c := range creds {
			status := "ok"
			switch until := auth.BlockedUntil(ms, c); {
			case c.Key == "":
				status = "$" + c.KeyEnv + " is not set"
			case !until.IsZero():
				status = "blocked until " + auth.Until(now, until)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, c.ID, dash(c.Label), c.Source(), lastFour(c.Key), status, resets(now, ms, c))
			rows++
		}
	}
	if rows == 0 {
		_, err := io.WriteString(w, "no credentials; add one with: printf %s \"$KEY\" | rally auth add PROVIDER --id ID --key -\n")
		return err
	}
	return tw.Flush()
}

// resets is when the provider said c's usage limit resets, as a local
// time with its zone ("15:00 CET", a date when not today), or "-": the
// block of STATUS may be a guess (auth.DefaultBlock), this never is.
func resets(now time.Time, ms []auth.Mark, c auth.Credential) string {
	at := auth.ResetAt(ms, c, now)
	if at.IsZero() {
		return "-"
	}
	return retry.WallClock(now, at) + " " + at.In(now.Location()).Format("MST")
}

// lastFour shows enough of a key to tell two apart. A short key shows
// nothing: four characters of it would be too large a share.
func lastFour(key string) string {
	if len(key) < 12 {
		return "-"
	}
	return "…" + key[len(key)-4:]
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rallyHome() string { return settings.Home(userHome(), os.Getenv) }

// authRun is what a run needs to pick and rotate its credentials.
type authRun struct {
	home string
	// file is auth.json as the session's start read it, and fileErr why
	// that read failed; both nil and useAuth reads it (set_model's).
	file    *auth.File
	fileErr error
	st      *settings.Settings
	target  settings.Target
	getenv  func(string) string
	now     func() time.Time
	log     *slog.Logger
	stderr  io.Writer
	// fleet shares marks, cooldowns, budgets and breakers (nil: none).
	fleet *fleet.Fleet
	// tel counts the fleet's waits (nil: telemetry off).
	tel *telemetry.Telemetry
}

// useAuth picks the run's credential from auth.json and the environment,
// skipping keys that a usage-limit mark blocks, and installs the Rotation
// that moves the session on a usage limit. It sets cfg.Provider,
// cfg.Model and cfg.Switcher (cfg.Model must hold the target's model).
// sim needs no key and cannot hit a limit, so it gets no rotation.
func useAuth(ctx context.Context, cfg *session.Config, a authRun) (*auth.Rotation, error) {
	if a.target.Config.API == settings.APISim {
		p, err := providerFor(a.target, "")
		cfg.Provider = p
		return nil, err
	}
	file, err := a.file, a.fileErr
	if file == nil && err == nil {
		file, err = auth.Load(auth.Path(a.home))
	}
	if err != nil {
		return nil, &exitError{2, err}
	}
	creds := a.credentials(file)
	if pool, err := creds(a.target.Provider); err == nil && len(pool) == 0 {
		// Sending the request would only buy a 401; say how to fix it.
		return nil, &exitError{2, fmt.Errorf("no key for %s: set %s or run rally auth add %s",
			a.target.Provider, a.target.Config.APIKeyEnv, a.target.Provider)}
	}
	rot := auth.New(auth.Config{
		Marks:       a.marks(),
		Credentials: creds,
		Connect:     a.connect,
		Fallbacks:   a.st.Retry.FallbackModels,
		Now:         a.now,
		Log:         a.log,
	})
	start, err := rot.Start(ctx, a.target.Provider, cfg.Model.ID)
	if err != nil {
		return nil, &exitError{2, err}
	}
	if start.Model.Provider != a.target.Provider {
		fmt.Fprintf(a.stderr, "rally: every credential of %s is blocked by a usage limit (see rally auth list); using fallback %s\n", a.target.Provider, start.Name)
	}
	cfg.Provider, cfg.Model, cfg.Ref, cfg.Switcher = start.Provider, start.Model, start.Ref, rot
	return rot, nil
}

// credentials lists a provider's credentials in the order they are tried:
// RALLY_API_KEY (for the run's own provider only: it is a key for one
// provider, not for every fallback), the provider's apiKeyEnv, then
// auth.json in file order. A provider without an apiKeyEnv (a local
// server, a one-run provider) works without a key when none is stored.
func (a authRun) credentials(file *auth.File) func(string) ([]auth.Credential, error) {
	return func(provider string) ([]auth.Credential, error) {
		var env []string
		cfg, ok := a.st.Providers[provider]
		if provider == a.target.Provider {
			cfg, ok = a.target.Config, true
			env = append(env, settings.KeyEnv)
		}
		if !ok {
			return nil, fmt.Errorf("auth: unknown provider %q", provider)
		}
		if cfg.APIKeyEnv != "" {
			env = append(env, cfg.APIKeyEnv)
		}
		pool := file.Pool(provider, env, a.getenv)
		if len(pool) == 0 && (cfg.APIKeyEnv == "" || cfg.API == settings.APISim) {
			pool = []auth.Credential{{}}
		}
		return pool, nil
	}
}

// connect opens a client for a provider's model with key: the run's own
// target (with its one-run flags) or a provider from settings.
func (a authRun) connect(provider, model, key string) (llm.Provider, llm.Model, error) {
	t := a.target
	if provider != t.Provider {
		var err error
		t, err = a.st.Resolve(settings.Overrides{Provider: provider, Model: model}, func(string) string { return "" })
		if err != nil {
			return nil, llm.Model{}, err
		}
	}
	t.Model = model
	m, err := modelFor(t)
	if err != nil {
		return nil, llm.Model{}, err
	}
	p, err := providerFor(t, key)
	if err != nil {
		return nil, llm.Model{}, err
	}
	return a.gate(p, provider, m, key), m, nil
}

// storedProvider picks the provider for a run that names none, when the
// environment has no provider key: the first of the built-in order whose
// credentials are in auth.json, else the first other provider stored there
// (by name). It returns "" when settings' own choice stands (an environment
// key, or nothing stored), so Resolve keeps deciding. An auth.json it
// cannot use is an error naming the file and the fix: falling back to the
// offline model would hide the user's keys behind a run that "works".
// The file it read (nil when it read none) is returned for the run to
// use, rather than read again.
func storedProvider(home string, st *settings.Settings) (string, *auth.File, error) {
	for _, name := range settings.KeyOrder() {
		if env := st.Providers[name].APIKeyEnv; env != "" && os.Getenv(env) != "" {
			return "", nil, nil // the run loads auth.json, and reports it broken
		}
	}
	path := auth.Path(home)
	file, err := auth.Load(path)
	if errors.Is(err, auth.ErrInsecure) {
		return "", nil, &exitError{2, err} // its message says the chmod
	}
	if err != nil {
		return "", nil, &exitError{2, fmt.Errorf("%w; fix the file (see rally auth --help) or move it away to run without stored keys, "+
			"e.g. mv %s %s.broken", err, path, path)}
	}
	for _, name := range settings.KeyOrder() {
		if len(file.Providers[name]) > 0 {
			return name, file, nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(file.Providers)) {
		if _, ok := st.Providers[name]; ok && len(file.Providers[name]) > 0 {
			return name, file, nil
		}
	}
	return "", file, nil
}
