package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/settings"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/spf13/cobra"
)

// openFleet connects to the fleet's Redis when settings or RALLY_REDIS_URL
// name one; nil means no fleet (the file store, nothing shared). Redis
// being down is not an error here: the Fleet works locally and says so
// once on stderr.
func openFleet(st *settings.Settings, getenv func(string) string, log *slog.Logger, stderr io.Writer) (*fleet.Fleet, error) {
	// A password in fleet.redis is refused by the settings check.
	raw, _ := st.Fleet.URL(getenv)
	if raw == "" {
		return nil, nil
	}
	// go-redis logs dial failures to stderr, process-wide; the Fleet
	// reports outages itself, once.
	redis.SetLogger(&logging.VoidLogger{})
	var password string
	if env := st.Fleet.PasswordEnv; env != "" {
		if password = getenv(env); password == "" {
			fmt.Fprintf(stderr, "rally: fleet.passwordEnv names $%s, which is not set; connecting without a password\n", env)
		}
	}
	f, err := fleet.Open(fleet.Config{
		URL: raw, Password: password, Namespace: st.Fleet.Namespace, Timeout: st.Fleet.Timeout(), Log: log,
		Warn: func(msg string) { fmt.Fprintln(stderr, "rally:", msg) },
	})
	if err != nil {
		return nil, &exitError{2, err}
	}
	return f, nil
}

// marks is where usage-limit marks live: the machine's file, shared with
// the fleet through Redis when there is one.
func (a authRun) marks() auth.Marks {
	file := &auth.FileMarks{Path: auth.MarksPath(a.home), Now: a.now}
	if a.fleet == nil {
		return file
	}
	return &fleet.Marks{Fleet: a.fleet, Local: file}
}

// listMarks is every live mark for rally auth list: the machine's and,
// with a fleet, the fleet's.
func listMarks(ctx context.Context, w io.Writer, home string, st *settings.Settings, getenv func(string) string, now time.Time) ([]auth.Mark, error) {
	a := authRun{home: home, st: st, getenv: getenv, now: func() time.Time { return now }}
	fl, err := openFleet(st, getenv, slog.New(slog.DiscardHandler), w)
	if err != nil {
		fmt.Fprintln(w, "warning:", err)
	}
	if fl != nil {
		defer fl.Close()
		a.fleet = fl
	}
	return a.marks().Blocked(ctx, "")
}

// gate puts a client for one credential behind the fleet's cooldowns,
// budget and breaker; without a fleet, or without a key (sim, a local
// server), the client goes as it is.
func (a authRun) gate(p llm.Provider, provider string, m llm.Model, key string) llm.Provider {
	if a.fleet == nil || key == "" {
		return p
	}
	b := a.st.Fleet.Budgets[provider]
	br := a.st.Fleet.Breaker
	fp := auth.Fingerprint(key)
	return &fleet.Gate{
		Provider: p, Fleet: a.fleet, ProviderName: provider, Model: m.ID, Fingerprint: fp,
		Budget:   fleet.Budget{Requests: b.RequestsPerMinute, Tokens: b.TokensPerMinute, Window: b.Window()},
		Breaker:  fleet.Breaker{Failures: br.Failures, Window: br.Window(), Open: br.Open()},
		Estimate: estimate,
		MaxWait:  a.st.RetryPolicy(provider).MaxDelay,
		OnWait: func(w fleet.Wait) {
			// The status line of print and rpc modes alike: stderr never
			// carries the protocol. The terminal UI has a status line.
			if ws, ok := a.stderr.(waitShower); ok {
				ws.showWait(w.String(), w.Delay)
			} else {
				fmt.Fprintln(a.stderr, "rally:", w.String())
			}
			a.tel.FleetWait(w.Provider, w.Model, w.Reason, w.Delay)
			a.log.Info("fleet: waiting", "reason", w.Reason, "provider", w.Provider, "model", w.Model,
				"key", w.Fingerprint, "delayMs", w.Delay.Milliseconds(), "status", w.Status)
		},
	}
}

// estimate is a request's input tokens, by the one rule (llm.EstimateTokens).
func estimate(req *llm.Request) int {
	sys := llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(req.System)}}
	return llm.EstimateTokens(append([]llm.Message{sys}, req.Messages...))
}

func newFleetCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "What a fleet of rally processes shares through Redis",
		Long: `With fleet.redis in settings (or RALLY_REDIS_URL), rally processes on many
machines share usage-limit marks, cooldowns from 429/503 hints, per-credential
budgets and a circuit breaker per provider and model. See README "For teams".`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Show the shared marks, cooldowns, budgets and breakers",
		Long: `Shows what the fleet's Redis holds now: usage-limit marks, cooldowns,
what is left of each budget, and each breaker's state. Keys appear as
fingerprints (the first 8 bytes of their SHA-256, as in auth-marks.json) and
credential ids, never as keys; the Redis password is never shown.`,
		Example: `  RALLY_REDIS_URL=redis://127.0.0.1:6379 rally fleet status`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := loadSettings(s)
			if err != nil {
				return err
			}
			f, err := openFleet(st, os.Getenv, slog.New(slog.DiscardHandler), io.Discard)
			if err != nil {
				return err
			}
			if f == nil {
				return &exitError{2, errors.New("fleet status: no fleet: set fleet.redis in settings or RALLY_REDIS_URL")}
			}
			defer f.Close()
			return fleetStatus(cmd.Context(), s.out, f, st, s.clock())
		},
	})
	return cmd
}

// fleetStatus writes the report of rally fleet status.
func fleetStatus(ctx context.Context, w io.Writer, f *fleet.Fleet, st *settings.Settings, now time.Time) error {
	status, err := f.Status(ctx, func(p string) fleet.Budget {
		b := st.Fleet.Budgets[p]
		return fleet.Budget{Requests: b.RequestsPerMinute, Tokens: b.TokensPerMinute, Window: b.Window()}
	})
	if err != nil {
		return fmt.Errorf("fleet status: redis at %s: %w", f.Addr(), err)
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "redis %s\n\n", f.Addr())
	section := func(title, header string, rows int) {
		fmt.Fprintf(tw, "%s\n", title)
		if rows == 0 {
			fmt.Fprintf(tw, "  none\n\n")
			return
		}
		fmt.Fprintf(tw, "  %s\n", header)
	}
	section("usage-limit marks", "PROVIDER\tID\tKEY\tBLOCKED UNTIL\tREASON", len(status.Marks))
	for _, m := range status.Marks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.Provider, m.ID, dash(m.Key), auth.Until(now, m.Until), dash(m.Reason))
	}
	gap(tw, len(status.Marks))
	section("cooldowns", "PROVIDER\tKEY\tSTATUS\tUNTIL", len(status.Cooldowns))
	for _, c := range status.Cooldowns {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", c.Provider, c.Fingerprint, c.Status, auth.Until(now, c.Until))
	}
	gap(tw, len(status.Cooldowns))
	section("budgets", "PROVIDER\tKEY\tREQUESTS LEFT\tTOKENS LEFT\tLIMIT", len(status.Budgets))
	for _, b := range status.Budgets {
		cfg := st.Fleet.Budgets[b.Provider]
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", b.Provider, b.Fingerprint, left(b.Requests), left(b.Tokens), limits(cfg))
	}
	gap(tw, len(status.Budgets))
	section("breakers", "PROVIDER\tMODEL\tSTATE\tFAILURES\tOPEN UNTIL", len(status.Breakers))
	for _, b := range status.Breakers {
		until := "-"
		if b.State == "open" {
			until = auth.Until(now, b.OpenUntil)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", b.Provider, b.Model, b.State, b.Failures, until)
	}
	if n := len(status.Skipped); n > 0 {
		fmt.Fprintf(tw, "\nskipped %d key(s) under rally's prefix that are not rally's (not a hash): %s\n", n, strings.Join(status.Skipped, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Every name, key and reason here came from Redis, which any fleet
	// peer writes; the table around them is rally's and has no controls.
	_, err = io.WriteString(w, termsafe.String(strings.TrimRight(buf.String(), "\n"))+"\n")
	return err
}

func gap(w io.Writer, rows int) {
	if rows > 0 {
		fmt.Fprintln(w)
	}
}

func left(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f", math.Floor(v))
}

func limits(b settings.Budget) string {
	s := ""
	if b.RequestsPerMinute > 0 {
		s = fmt.Sprintf("%d req", b.RequestsPerMinute)
	}
	if b.TokensPerMinute > 0 {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d tok", b.TokensPerMinute)
	}
	switch {
	case s == "":
		return "-"
	case b.Window() == time.Minute:
		return s + " per minute"
	}
	return s + " per " + b.Window().String()
}
