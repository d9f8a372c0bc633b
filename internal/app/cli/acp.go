package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rally-agent/rally/internal/app/acp"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/spf13/cobra"
)

// runACP is `rally --mode acp`: an Agent Client Protocol agent on stdin
// and stdout (package acp), one rally session per ACP session. stdout
// carries protocol messages only; warnings and logs go to stderr and the
// log file. EOF on stdin, SIGTERM, SIGINT and SIGHUP end it with exit 0.
func runACP(cmd *cobra.Command, s streams, f *runFlags, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("--mode acp takes no prompt argument: the editor sends session/prompt")}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), stopSignals()...)
	defer stop()
	quiet := streams{in: strings.NewReader(""), out: io.Discard, err: s.err}
	rc, err := newRunConfig(quiet, f)
	if err != nil {
		return err
	}
	defer rc.close()
	// An ACP session starts when the editor asks, maybe hours from now:
	// each reads auth.json then, not as start-up read it.
	rc.takeAuth()
	st, home := rc.st, rc.home
	log, closeLog := newLogger(home, s.err, f.verbose)
	defer closeLog()
	rc.log = log // every session of the process logs here: rally.log is opened once
	hooks := startHooks(st, home, log, s.err)
	defer hooks.close()

	var mu sync.Mutex
	envs := map[*session.Session]*runEnv{} // the open sessions' runs, for Interrupted
	open := func(ctx context.Context, o acp.Open) (*session.Session, func(), error) {
		rf := *f
		rf.mode, rf.cwd, rf.cont, rf.file = "text", o.Cwd, false, ""
		rf.confirm = o.Ask
		if o.ID != "" {
			path, err := findSession(home, rf, o.ID)
			if err != nil {
				return nil, nil, err
			}
			rf.file = path
		}
		env, err := newRunEnv(ctx, quiet, &rf, rc)
		if err != nil {
			return nil, nil, err
		}
		mu.Lock()
		hooks.watch(env.sess) // hooks follow the session opened last
		envs[env.sess] = env
		mu.Unlock()
		return env.sess, func() {
			mu.Lock()
			delete(envs, env.sess)
			mu.Unlock()
			env.close()
		}, nil
	}
	// session/load of a file stopped during a wait for a reset: resumed
	// under --wait-for-reset or retry.waitForReset (the loaded project's
	// settings), else the editor is told how, as print mode and RPC do.
	interrupted := func(sess *session.Session) *acp.Interrupted {
		mu.Lock()
		env := envs[sess]
		mu.Unlock()
		if env == nil {
			return nil
		}
		w := env.interruptedWait()
		if w == nil {
			return nil
		}
		note, resume := interruptedNote(s.clock(), env.st, w)
		log.Info("acp: session/load: " + note)
		return &acp.Interrupted{Wait: *w, Resume: resume, Note: note}
	}
	err = acp.Serve(ctx, s.in, s.out, acp.Config{
		Open:        open,
		Interrupted: interrupted,
		Version:     buildVersion(),
		Log:         log,
	})
	if err != nil {
		return &exitError{1, err}
	}
	return nil
}

// findSession is the session file an ACP session id names: a session
// file's path as it is, else the file of that id among the sessions of
// cwd (session/load of a session this agent created).
func findSession(home string, f runFlags, id string) (string, error) {
	if filepath.IsAbs(id) {
		if fi, err := os.Stat(id); err == nil && fi.Mode().IsRegular() {
			return id, nil
		}
		return "", fmt.Errorf("no session file %s", id)
	}
	dir := f.sessionDir
	if dir == "" {
		dir = journal.Dir(home, f.cwd)
	}
	names, err := journal.List(dir)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", id, err)
	}
	for _, p := range names {
		if strings.HasSuffix(filepath.Base(p), "_"+id+".jsonl") {
			return p, nil
		}
	}
	return "", fmt.Errorf("no session %s in %s", id, dir)
}
