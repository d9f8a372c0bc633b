package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/internal/sandbox"
	"github.com/rally-agent/rally/settings"
	"github.com/rally-agent/rally/tool"
)

// toolSet is what a run's built-in tools need from rally: the tools and
// the function that kills what is left of their processes at exit.
type toolSet struct {
	tools []tool.Tool
	stop  func()
}

// newTools builds the built-in tools of a run in cwd: bash
// runs without rally's key variables in its environment (tools.allowEnv
// opts back in), no tool touches auth.json or auth-marks.json, every known
// key in tool output is redacted before the agent stores, emits or sends
// it, output is capped by tools.maxOutputBytes/maxOutputLines, and the
// caller's stop kills every process group the tools left running. With
// tools.sandbox "workspace" bash commands run confined (sandboxStart);
// where that cannot be, warn says so, once.
//
// names and keys are the run's secrets (runSecrets).
func newTools(home, cwd string, st *settings.Settings, environ []string, names map[string]bool, keys []string, warn func(string)) toolSet {
	procs := &tool.Procs{}
	tools := tool.New(cwd, tool.Options{
		MaxBytes: st.Tools.MaxOutputBytes,
		MaxLines: st.Tools.MaxOutputLines,
		Env:      scrubEnv(environ, names, keys, st.Tools.AllowEnv),
		Deny:     []string{auth.Path(home), auth.MarksPath(home)},
		Redact:   func(s string) string { return redact.Secrets(s, keys...) },
		Procs:    procs,
		Start:    sandboxStart(home, cwd, st.Tools, warn),
	})
	return toolSet{tools: tools, stop: procs.Kill}
}

// sandboxStart is bash's Start for tools.sandbox: nil (start as is) when
// it is off, or when Landlock is unavailable, which warn is told.
func sandboxStart(home, cwd string, t settings.Tools, warn func(string)) func(*exec.Cmd) (func() error, error) {
	if t.Sandbox == settings.SandboxOff {
		return nil
	}
	if _, err := sandbox.Check(); err != nil {
		warn(fmt.Sprintf("tools run without a sandbox (%v); auth.json is still refused by name and keys are still redacted", err))
		return nil
	}
	var hide []string
	for _, f := range []string{auth.Path(home), auth.MarksPath(home)} {
		hide = append(hide, f, f+".lock")
	}
	write := []string{cwd, os.TempDir()}
	for _, p := range t.SandboxPaths {
		// The settings check let through only absolute paths and ~/….
		if p == "~" || strings.HasPrefix(p, "~/") {
			h, err := os.UserHomeDir()
			if err != nil {
				warn(fmt.Sprintf("tools.sandboxPaths: %s left out: %v", p, err))
				continue
			}
			p = filepath.Join(h, p[1:])
		}
		if _, err := os.Stat(p); err != nil {
			// Landlock grants only what exists; a command could not
			// create it either, so say so rather than fail later.
			warn(fmt.Sprintf("tools.sandboxPaths: %s: %v; commands cannot write there", p, errors.Unwrap(err)))
		}
		write = append(write, p)
	}
	p := &sandbox.Policy{Hide: hide, Write: write, NoNetwork: t.SandboxNoNetwork}
	return p.Start
}

// runSecrets is secrets for a run: auth.json's keys as well as the
// environment's.
func runSecrets(home string, st *settings.Settings, environ []string) (names map[string]bool, keys []string) {
	file, err := auth.Load(auth.Path(home))
	return readSecrets(st, file, err, environ)
}

// readSecrets is secrets of auth.json as a read of it returned. An
// auth.json rally cannot read is refused where the run picks its
// credential; here it only adds names and keys, so a broken one adds none.
func readSecrets(st *settings.Settings, file *auth.File, err error, environ []string) (names map[string]bool, keys []string) {
	if err != nil {
		file = &auth.File{}
	}
	return secrets(st, file, environ)
}

// secrets returns the names of the variables that hold provider keys and
// the keys rally knows: RALLY_API_KEY, every provider's apiKeyEnv, the
// keyEnv variables of auth.json, any *_API_KEY variable, and the keys
// stored in auth.json.
func secrets(st *settings.Settings, file *auth.File, environ []string) (names map[string]bool, keys []string) {
	names = map[string]bool{settings.KeyEnv: true}
	for _, p := range st.Providers {
		if p.APIKeyEnv != "" {
			names[p.APIKeyEnv] = true
		}
	}
	for _, creds := range file.Providers {
		for _, c := range creds {
			if c.KeyEnv != "" {
				names[c.KeyEnv] = true
			}
			if c.Key != "" {
				keys = append(keys, c.Key)
			}
		}
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") {
			names[k] = true
		}
		if names[k] && v != "" {
			keys = append(keys, v)
		}
	}
	// Longest first, so that a key containing another is replaced whole.
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return names, slices.Compact(keys)
}

// scrubEnv returns environ without the key variables, and without any
// other variable whose value is a known key, except those allow names.
func scrubEnv(environ []string, names map[string]bool, keys, allow []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !slices.Contains(allow, k) && (names[k] || v != "" && slices.Contains(keys, v)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stopSignals end a run the same way: the running prompt is aborted, the
// tools' processes are killed, the session is closed. SIGHUP (the
// terminal went away) is one of them, so a closed terminal does not leave
// a tool running.
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} }
