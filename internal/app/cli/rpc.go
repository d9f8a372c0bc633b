package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/rpc"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

// runRPC is `rally --mode rpc`: the JSON-lines protocol on stdin and
// stdout (package rpc). stdout carries protocol lines only; warnings and
// logs go to stderr and the log file. EOF on stdin, SIGTERM, SIGINT and SIGHUP
// abort any run and exit 0.
func runRPC(cmd *cobra.Command, s streams, f *runFlags, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("--mode rpc takes no prompt argument: send prompt commands on stdin")}
	}
	if f.events != "full" && f.events != "delta" {
		return &exitError{2, fmt.Errorf("--events must be full or delta, got %q", f.events)}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), stopSignals()...)
	defer stop()
	// The tools of tools.confirm ask the client, through pi's extension UI
	// dialogs (pi-acp shows them as the editor's permission requests).
	dialogs := rpc.NewDialogs()
	f.confirm = func(ctx context.Context, name string, args json.RawMessage) (bool, error) {
		return dialogs.Confirm(ctx, "Allow "+name+"?", name+" "+string(args))
	}
	rc, err := newRunConfig(s, f)
	if err != nil {
		return err
	}
	defer rc.close()
	b, err := newRPCBackend(ctx, s, *f, rc)
	if err != nil {
		return err
	}
	defer b.close()
	b.hooks = startHooks(b.current().st, b.home, b.log, s.err)
	defer b.hooks.close()
	b.hooks.watch(b.current().sess)
	growPipe(s.out)
	cwd, _ := os.Getwd()
	keys := b.current().keys
	err = rpc.Serve(ctx, s.in, s.out, rpc.Config{
		Session:     b.current().sess,
		NewSession:  b.newSession,
		OpenSession: b.openSession,
		Resume:      b.resumeSwitched,
		Models:      b.models,
		Connect:     b.connect,
		Dialogs:     dialogs,
		Dir:         cwd,
		Redact:      func(s string) string { return redact.Secrets(s, keys...) },
		Deltas:      f.events == "delta",
		Log:         b.log,
	})
	if err != nil {
		return &exitError{1, err}
	}
	return b.incomplete()
}

// rpcBackend builds what the RPC server asks for from settings and flags:
// fresh sessions (new_session), the model list and model clients
// (get_available_models, set_model).
type rpcBackend struct {
	s    streams
	f    runFlags
	home string
	log  *slog.Logger
	// rc is what every session of the process is built from.
	rc *runConfig

	mu       sync.Mutex
	env      *runEnv
	lost     *session.Session // the first session new_session replaced with a save failed
	closeLog func()
	hooks    *hookRun // follows new_session
}

// newRPCBackend builds the first session from rc; the backend uses rc
// for the later ones, and close does not stop rc (its caller does).
//
// Every session of the backend logs to rc.log, opened here when the caller
// has not (one open of rally.log per process, not one per session and
// another for the backend).
func newRPCBackend(ctx context.Context, s streams, f runFlags, rc *runConfig) (*rpcBackend, error) {
	closeLog := func() {}
	if rc.log == nil {
		var closeOwn func()
		rc.log, closeOwn = newLogger(rc.home, s.err, f.verbose)
		closeLog = func() { closeOwn(); rc.log = nil }
	}
	env, err := newRunEnv(ctx, s, &f, rc)
	if err != nil {
		closeLog() // rc no longer names a closed logger
		return nil, err
	}
	return &rpcBackend{s: s, f: f, home: rc.home, log: rc.log, env: env, closeLog: closeLog, rc: rc}, nil
}

func (b *rpcBackend) current() *runEnv {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.env
}

// incomplete is the exit status of the run: 1 when a session of it (this
// one, or one new_session replaced) was not fully saved.
func (b *rpcBackend) incomplete() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost != nil {
		return incomplete(b.lost)
	}
	return incomplete(b.env.sess)
}

func (b *rpcBackend) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.env.close()
	b.closeLog()
}

// newSession is new_session: a fresh session file (never --continue or
// --session's), the same settings and flags. The server calls it once the
// old session has settled, so the old one's resources go now.
func (b *rpcBackend) newSession(ctx context.Context) (*session.Session, error) {
	f := b.f
	f.cont, f.file = false, ""
	return b.swap(ctx, f)
}

// openSession is switch_session, fork and clone: the session file at
// path, resumed with the same settings and flags.
func (b *rpcBackend) openSession(ctx context.Context, path string) (*session.Session, error) {
	f := b.f
	f.cont, f.file, f.noSession = false, path, false
	return b.swap(ctx, f)
}

// swap replaces the session with one built from f and closes the old one.
func (b *rpcBackend) swap(ctx context.Context, f runFlags) (*session.Session, error) {
	env, err := newRunEnv(ctx, b.s, &f, b.rc)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	old := b.env
	b.env = env
	if b.lost == nil && old.sess.StoreErr() != nil {
		b.lost = old.sess
	}
	b.mu.Unlock()
	b.hooks.watch(env.sess)
	old.close()
	return env.sess, nil
}

// models lists the session's model first, then every model of every
// provider that has a credential (or needs none), from the built-in
// catalog and the settings.
func (b *rpcBackend) models() []llm.Model {
	out := []llm.Model{b.current().sess.State().Model}
	conf := b.rc
	seen := map[string]bool{out[0].Provider + "/" + out[0].ID: true}
	file, err := auth.Load(auth.Path(b.home))
	if err != nil {
		b.log.Warn("rpc: get_available_models: auth.json", "err", err)
		file = &auth.File{}
	}
	names := make([]string, 0, len(conf.st.Providers))
	for name := range conf.st.Providers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := conf.st.Providers[name]
		if name == conf.target.Provider {
			p = conf.target.Config
		}
		if !usable(name, name == conf.target.Provider, p, file) {
			continue
		}
		for _, m := range providerModels(name, p) {
			if !seen[name+"/"+m.ID] {
				seen[name+"/"+m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// usable reports whether a provider can be called: it needs no key, or
// one is in the environment or auth.json.
func usable(name string, own bool, p settings.Provider, file *auth.File) bool {
	if p.API == settings.APISim || p.APIKeyEnv == "" {
		return true
	}
	env := []string{p.APIKeyEnv}
	if own {
		env = append(env, settings.KeyEnv)
	}
	return len(file.Pool(name, env, os.Getenv)) > 0
}

// connect opens a client for a model set_model picked. A session that
// rotates credentials gets it from its rotation (which keeps track of the
// key in use); a session started on sim has none, and takes the first
// usable credential.
func (b *rpcBackend) connect(ctx context.Context, m llm.Model) (llm.Target, error) {
	if rot := b.current().rot; rot != nil {
		return rot.Start(ctx, m.Provider, m.ID)
	}
	conf := b.rc
	t := conf.target
	if m.Provider != t.Provider {
		var err error
		if t, err = conf.st.Resolve(settings.Overrides{Provider: m.Provider}, os.Getenv); err != nil {
			return llm.Target{}, err
		}
	}
	t.Model = m.ID
	cfg := session.Config{Model: m}
	a := authRun{home: b.home, st: conf.st, target: t, getenv: os.Getenv, now: b.s.clock, log: b.log, stderr: b.s.err, fleet: b.current().fleet, tel: conf.tel}
	if _, err := useAuth(ctx, &cfg, a); err != nil {
		return llm.Target{}, err
	}
	return llm.Target{Provider: cfg.Provider, Model: cfg.Model, Ref: cfg.Ref}, nil
}
