package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/app/print"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
	"github.com/rally-agent/rally/tool"
	"github.com/spf13/cobra"
)

// runFlags are the flags of a run (print, json and rpc modes).
type runFlags struct {
	print      bool
	mode       string
	provider   string
	model      string
	api        string
	baseURL    string
	noSession  bool
	sessionDir string
	cont       bool
	file       string
	maxTurns   int
	verbose    bool
	preset     string
	events     string
	// waitForReset is --wait-for-reset: "" off, "on", or a duration.
	waitForReset string
	// mustResume: --continue's session in use by another rally is an
	// error, not a reason to start a new one (rally compact).
	mustResume bool
	prompt     promptFlags
	pi         piFlags
	// tools, when set, wraps the built-in tools (the UI's tools.confirm).
	tools func([]tool.Tool) []tool.Tool
	// confirm, when set, asks before the tools of tools.confirm run (an
	// RPC client through pi's extension UI dialogs, an ACP editor through
	// session/request_permission).
	confirm tool.AskFunc
	// cwd is the working directory of the run's tools and session; "" is
	// the process's (ACP sessions name their own).
	cwd string
	// ui: the terminal UI shows the session's notices itself (stderr
	// would write over its screen) and every streamed delta.
	ui bool
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVarP(&f.print, "print", "p", false, "print mode: answer the prompt (arguments or stdin) and exit")
	fl.StringVar(&f.mode, "mode", "text", "output mode: text, json (every event as a JSON line), rpc (pi's JSON-lines protocol on stdin/stdout) or acp (Agent Client Protocol, for editors)")
	fl.StringVar(&f.provider, "provider", "", "provider name from settings (openai, anthropic, google, openrouter, groq, local, sim, …)")
	fl.StringVar(&f.model, "model", "", "model id")
	fl.StringVar(&f.api, "api", "", "wire API for this run: "+strings.Join(apis.Networked(), ", "))
	fl.StringVar(&f.baseURL, "base-url", "", "point this run at any server (e.g. http://127.0.0.1:8080/v1)")
	fl.BoolVar(&f.noSession, "no-session", false, "do not save the session")
	fl.StringVar(&f.sessionDir, "session-dir", "", "directory for session files (default $RALLY_HOME/sessions/<cwd>)")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the latest session in this directory")
	fl.StringVar(&f.file, "session", "", "use this session file: resumed if it exists, else created")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "most model calls one prompt may make (overrides agent.maxTurns)")
	fl.BoolVar(&f.verbose, "verbose", false, "also log retry decisions to stderr")
	fl.StringVar(&f.events, "events", "full", "rpc mode: form of message_update, full (the partial message, as pi) or delta (only the delta: output linear in the answer)")
	f.registerWaitForReset(cmd)
	f.prompt.register(cmd)
	f.pi.register(cmd, &f.prompt)
	fl.StringVar(&f.preset, "preset", "", "demo: run against an in-process fake LLM with this fault preset (flaky, overloaded, rate-limited, usage-limit, usage-reset, overflow, midstream-drop, resume, stall)")
}

// check validates the flags that stand for a setting by that setting's
// own rule in the schema, so --max-turns accepts exactly what
// agent.maxTurns does.
func (f *runFlags) check(cmd *cobra.Command) error {
	if err := f.prompt.check(); err != nil {
		return err
	}
	if err := f.pi.check(cmd, &f.prompt); err != nil {
		return err
	}
	if !cmd.Flags().Changed("max-turns") {
		return nil
	}
	file, err := settings.ParseFile(settings.Source{Name: "--max-turns"}, nil)
	if err == nil {
		err = file.Set("agent.maxTurns", f.maxTurns)
	}
	if err == nil {
		_, err = file.Check()
	}
	if errs := settings.Errors(err); len(errs) > 0 {
		return &exitError{2, fmt.Errorf("--max-turns: %s", errs[0].Msg)}
	}
	if err != nil {
		return &exitError{2, err}
	}
	return nil
}

// runPrompt is the root command's action: print or json mode.
func runPrompt(cmd *cobra.Command, s streams, f *runFlags, args []string) (err error) {
	if err := f.check(cmd); err != nil {
		return err
	}
	switch f.mode {
	case "text", "json":
	case "rpc":
		return runRPC(cmd, s, f, args)
	case "acp":
		return runACP(cmd, s, f, args)
	default:
		return &exitError{2, fmt.Errorf("--mode must be text, json, rpc or acp, got %q", f.mode)}
	}
	if !f.print {
		if err := checkArgs(cmd, args); err != nil {
			return err
		}
		if f.mode == "text" && (len(args) == 1 || isTerminal(s.in)) {
			ui := s.ui
			if ui == nil {
				ui = runUI
			}
			return ui(cmd, s, f, strings.Join(args, " "))
		}
	}
	prompt := strings.TrimSpace(strings.Join(args, " "))
	if prompt == "" && !isTerminal(s.in) {
		b, err := io.ReadAll(io.LimitReader(s.in, 16<<20))
		if err != nil {
			return fmt.Errorf("read prompt from stdin: %w", err)
		}
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" && !f.print && len(args) == 0 {
		// Plain rally, without a terminal for the UI: rally </dev/null, or
		// from a script.
		return &exitError{2, errNoTerminal}
	}
	if prompt == "" {
		return &exitError{2, errors.New("no prompt: give it as an argument or on stdin")}
	}

	ctx, stop := withStopSignals(cmd.Context())
	defer stop()
	defer func() { err = interrupted(ctx, err) }()

	rc, err := newRunConfig(s, f)
	if err != nil {
		return err
	}
	defer rc.close()
	env, err := newRunEnv(ctx, s, f, rc)
	if err != nil {
		return err
	}
	defer env.close()
	hk := startHooks(env.st, env.home, env.log, s.err)
	defer hk.close()
	hk.watch(env.sess)

	announce(s.err, f, env.sess.State().Model)
	var out outputter
	if f.mode == "json" {
		out = print.NewJSON(s.out)
	} else {
		out = print.NewText(s.out, s.err, print.Options{Live: printsLive(s), TTY: isTerminal(s.err), Verbose: f.verbose})
	}
	unsubscribe := env.sess.Subscribe(out.Event)
	err = resumeWaitPrint(ctx, s, env)
	if err == nil {
		err = env.sess.Prompt(ctx, prompt, session.PromptOptions{})
	}
	unsubscribe()
	out.Finish(err)
	if err == nil {
		return incomplete(env.sess)
	}
	return runFailed(err)
}

// announce names the model a text-mode run uses, once on stderr, unless it
// is the offline sim or a --preset demo: a stored key must never move a
// run to a paid provider silently.
func announce(w io.Writer, f *runFlags, m llm.Model) {
	if f.mode != "text" || f.preset != "" || m.API == settings.APISim {
		return
	}
	fmt.Fprintf(w, "rally: using %s\n", termsafe.String(m.Provider+"/"+m.ID))
}

// runFailed is the exit status of a run's error: 130 when the user
// interrupted it (the session wraps context.Canceled), else 1.
func runFailed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return &exitError{130, err}
	default:
		return &exitError{1, err}
	}
}

// outputter renders session events.
type outputter interface {
	Event(session.Event)
	Finish(error)
}

// runEnv is everything a run needs, built from settings and flags.
type runEnv struct {
	sess    *session.Session
	journal *journal.Journal
	// rot picks credentials and fallback models (nil for sim); a
	// set_model can go through rot.Start to get a usable key.
	rot *auth.Rotation
	// fleet is the shared Redis state (nil without a fleet).
	fleet   *fleet.Fleet
	closers []func()
	// st, home and log are what the run was built from (hooks use them).
	st   *settings.Settings
	home string
	log  *slog.Logger
	// keys are the secrets the run redacts (runSecrets), worked out once
	// for the tools, the journal, the unclassified log and the RPC output
	// rather than once for each.
	keys []string
}

func (e *runEnv) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

// newRunEnv builds one session of the process from rc for the flags
// (--continue, --session…), which may differ from run to run (new_session
// starts a fresh file); what they choose in rc is the same for all.
func newRunEnv(ctx context.Context, s streams, f *runFlags, rc *runConfig) (*runEnv, error) {
	st, target, model, home := rc.st, rc.target, rc.model, rc.home
	env := &runEnv{st: st}
	logger := rc.log
	if logger == nil {
		var closeLog func()
		logger, closeLog = newLogger(home, s.err, f.verbose)
		env.closers = append(env.closers, closeLog)
	}
	env.home, env.log = home, logger

	cwd := f.cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	maxTurns := st.Agent.MaxTurns
	if f.maxTurns > 0 {
		maxTurns = f.maxTurns
	}
	environ := os.Environ()
	authFile, authErr := rc.sessionAuth()
	names, keys := readSecrets(st, authFile, authErr, environ)
	env.keys = keys
	tools := newTools(home, cwd, st, environ, names, keys, func(msg string) {
		fmt.Fprintln(s.err, "rally:", msg)
		logger.Warn(msg)
	})
	env.closers = append(env.closers, tools.stop)
	builtin := f.prompt.pick(tools.tools)
	system, err := f.prompt.systemPrompt(cwd, builtin)
	if err != nil {
		env.close()
		return nil, err
	}
	if f.tools != nil {
		builtin = f.tools(builtin)
	}
	if f.confirm != nil {
		builtin = tool.Confirm(builtin, st.Tools.Confirm, f.confirm)
	}
	cfg := session.Config{
		Model:    model,
		System:   system,
		Thinking: f.prompt.thinking,
		Tools:    builtin,
		MaxTurns: maxTurns,
		Retry:    st.RetryPolicy, // each provider's own maxRetries, after a switch too
		Log:      logger,
		Compaction: session.CompactionConfig{
			ThresholdPercent: st.Compaction.ThresholdPercent,
			KeepRecentTokens: st.Compaction.KeepRecentTokens,
		},
		NoAutoCompaction: !st.Compaction.Enabled,
		PartialsHidden:   partialsHidden(f, s, st),
		Now:              s.clock,
	}
	if t := rc.tel; t != nil {
		cfg.TracerProvider, cfg.MeterProvider, cfg.CaptureContent = t.TracerProvider, t.MeterProvider, t.CaptureContent
	}
	// The fleet's Redis, when there is one (fleet.go).
	fl, err := openFleet(st, os.Getenv, logger, s.err)
	if err != nil {
		env.close()
		return nil, err
	}
	if fl != nil {
		env.fleet = fl
		env.closers = append(env.closers, func() { fl.Close() })
	}
	if rc.preset == nil { // a demo's fake model teaches nothing worth keeping
		cfg.Windows = learnedWindows(home, fl)
		cfg.Unclassified = unclassifiedLog(home, keys)
	}
	// The credential, and the rotation on usage limits (auth.go).
	if env.rot, err = useAuth(ctx, &cfg, authRun{home: home, file: authFile, fileErr: authErr, st: st, target: target, getenv: os.Getenv, now: s.clock, log: logger, stderr: s.err, fleet: fl, tel: rc.tel}); err != nil {
		env.close()
		return nil, err
	}
	// A signal while the credentials were chosen (a fleet Redis that does
	// not answer, say) ends start-up here: nothing is opened after it.
	if err := ctx.Err(); err != nil {
		env.close()
		return nil, err
	}
	if err := env.openJournal(f, home, cwd, &cfg, s.err); err != nil {
		env.close()
		return nil, err
	}
	notices := s.err
	if f.ui {
		notices = io.Discard
	}
	if r := cfg.Resume; r != nil {
		reportLoad(notices, logger, env.journal.Path(), r.Warnings)
	}
	if err := seedPreset(f.preset, env.journal, &cfg); err != nil {
		env.close()
		return nil, err
	}
	sess, err := session.NewContext(ctx, cfg)
	if err != nil {
		env.close()
		return nil, err
	}
	env.sess = sess
	env.closers = append(env.closers, storeNotices(sess, notices))
	if name := strings.TrimSpace(f.pi.name); name != "" {
		if err := sess.SetName(name); err != nil {
			env.close()
			return nil, fmt.Errorf("--name: %w", err)
		}
	}
	return env, nil
}

// resolveTarget is the provider and model a run uses for its flags: the
// settings' choice, where a key stored with `rally auth add` configures
// its provider as much as one in the environment does.
//
// It returns auth.json as it read it to choose, or nil when it did not.
func resolveTarget(st *settings.Settings, o settings.Overrides) (settings.Target, *auth.File, error) {
	var file *auth.File
	if o.Provider == "" && o.BaseURL == "" && st.DefaultProvider == "" {
		p, f, err := storedProvider(settings.Home(userHome(), os.Getenv), st)
		if err != nil {
			return settings.Target{}, nil, err
		}
		o.Provider, file = p, f
	}
	t, err := st.Resolve(o, os.Getenv)
	if err != nil {
		return settings.Target{}, nil, &exitError{2, err}
	}
	return t, file, nil
}

// openJournal sets up persistence per --no-session, --session-dir,
// --continue and --session. A session another rally is writing is never
// appended to: --session fails, --continue starts a new one with a note.
func (e *runEnv) openJournal(f *runFlags, home, cwd string, cfg *session.Config, stderr io.Writer) error {
	if f.noSession {
		return nil
	}
	dir := f.sessionDir
	if dir == "" {
		dir = journal.Dir(home, cwd)
	}
	path := f.file
	if path == "" && f.cont {
		latest, err := journal.Latest(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		path = latest
	}
	var j *journal.Journal
	if path != "" {
		if fi, err := os.Stat(path); err == nil {
			restore := pauseGC(fi.Size())
			jj, loaded, err := journal.Open(path)
			restore()
			switch {
			case errors.Is(err, journal.ErrLocked) && f.file == "" && !f.mustResume:
				fmt.Fprintf(stderr, "rally: the latest session %s is in use by another rally process; starting a new session\n", path)
			case errors.Is(err, journal.ErrLocked):
				return openLocked(err)
			case err != nil:
				return &exitError{2, err}
			default:
				j = jj
				// The session keeps the context, its ids, the name and the
				// warnings; the entries (5 MB of a 50k-message file) would
				// live as long as it for nothing: get_entries, get_tree and
				// forks read the file again.
				loaded.Entries = nil
				cfg.Resume = loaded
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if j == nil {
		// --session FILE names the file itself, so the next run with the
		// same flag resumes it.
		var err error
		if f.file != "" {
			j, err = journal.CreateAt(f.file, cwd)
		} else {
			j, err = journal.Create(dir, cwd)
		}
		if err != nil {
			return err
		}
	}
	// Keys typed into a prompt or echoed in an answer never reach the
	// file (the model's context keeps the text as typed): the keys the
	// tools' output is redacted of, and key-shaped tokens.
	keys := e.keys
	j.SetRedact(func(s string) string { return redact.Secrets(s, keys...) })
	cfg.Store = j
	e.journal = j
	e.closers = append(e.closers, func() { j.Close() })
	return nil
}

// startPreset runs the fake LLM with a preset on a loopback port. Its
// answers are the sim model's answer to each request's prompt, streamed
// word by word, so the demo reads like a real session in every mode: the
// UI and RPC start the server before any prompt is known.
func startPreset(name string) (url string, stop func(), err error) {
	steps, err := llmtest.Preset(name)
	if err != nil {
		return "", nil, &exitError{2, err}
	}
	for i := range steps {
		// The last step is the answer after the faults (a dropped stream
		// was sending it too); others keep their text (overflow's summary).
		if i == len(steps)-1 || steps[i].Fault == llmtest.Drop {
			steps[i].Text, steps[i].Delay = "", sim.DefaultDelay
		}
		if name == "overflow" && steps[i].Error == llmtest.Overflow {
			steps[i].Body = presetOverflow
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("preset: listen: %w", err)
	}
	fake := llmtest.New(steps...)
	fake.Answer = sim.Answer
	srv := &http.Server{Handler: fake}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", func() { fake.Close(); srv.Close() }, nil
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}

// errNoTerminal is the error of the UI without a terminal to run in.
var errNoTerminal = errors.New(`no terminal for the interactive UI; use rally -p "prompt", or pipe a prompt on stdin: echo "prompt" | rally`)

// isTerminal reports whether v is a file open on a terminal. Being a
// character device is not enough: /dev/null is one.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
