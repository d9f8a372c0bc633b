package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/internal/telemetry"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/settings"
)

// runConfig is the one configuration a process's runs are built from,
// worked out once by newRunConfig (the composition root): the settings
// (their warnings printed once), the provider and model the flags or the
// --preset choose, and RALLY_HOME. Print mode builds its run from it; the
// RPC backend and the terminal UI build every session of the process from
// the same one (new_session, /new, /resume) and answer
// get_available_models and set_model from it, instead of loading the
// settings and resolving the target again.
type runConfig struct {
	st     *settings.Settings
	target settings.Target
	model  llm.Model
	home   string
	preset *preset // nil without --preset
	stop   func()  // stops the preset's fake LLM
	// tel exports every session's spans and metrics; nil with telemetry
	// off (the default), and then no OpenTelemetry code runs.
	tel    *telemetry.Telemetry
	stderr func(string)
	// log, when set, is the process's logger: the modes that hold
	// several sessions (rpc, the UI, ACP) open rally.log once for all of
	// them, and whoever set it closes it. Nil, and each run opens its own.
	log *slog.Logger
	// auth is auth.json as choosing the target read it, for the first
	// session to use (takeAuth) rather than read it again: start-up reads
	// the file once. Later sessions read it afresh, to see keys added
	// since.
	auth atomic.Pointer[auth.File]
}

// takeAuth returns the auth.json start-up read, once, or nil.
func (rc *runConfig) takeAuth() *auth.File { return rc.auth.Swap(nil) }

// sessionAuth reads auth.json for a session about to start, once for all
// it takes from the file (its secrets and its credential): the first
// session takes start-up's read, a later one reads the file afresh.
func (rc *runConfig) sessionAuth() (*auth.File, error) {
	if file := rc.takeAuth(); file != nil {
		return file, nil
	}
	return auth.Load(auth.Path(rc.home))
}

// preset is a --preset demo: the fake LLM it runs against (the script is
// llmtest's preset of its name) and what the demo changes in the run.
type preset struct {
	name string
	// idleTimeoutMs replaces the provider's stream idle timeout, when set:
	// the stall demo should not take the default 60 s to notice the stall.
	idleTimeoutMs int
	// window is the demo model's context window, when set: the overflow
	// demo's seeded conversation must have an older part to summarise.
	window int
	// resume makes the demo's provider speak the Responses API in
	// background mode with retry.streaming "resume", for this run only.
	resume bool
	// waitForReset turns retry.waitForReset on, with no margin: the
	// usage-reset demo's fake lifts its limit at the exact reset it states
	// (rounded up to the second), so the demo waits just its 10 s.
	waitForReset bool
}

// presets holds what the demos change; the others change nothing.
var presets = map[string]preset{
	"stall":       {idleTimeoutMs: 2000},
	"overflow":    {window: presetWindow},
	"resume":      {resume: true},
	"usage-reset": {waitForReset: true},
}

// newRunConfig loads the settings and resolves the run's target for the
// flags; with --preset it starts the demo's fake LLM (which answers each
// prompt it is sent), which close stops.
func newRunConfig(s streams, f *runFlags) (*runConfig, error) {
	st, err := loadSettings(s)
	if err != nil {
		return nil, err
	}
	if err := applyWaitForReset(st, f.waitForReset); err != nil {
		return nil, err
	}
	rc := &runConfig{st: st, home: rallyHome(), stop: func() {}, stderr: func(msg string) { fmt.Fprintln(s.err, "rally:", msg) }}
	if err := rc.startTelemetry(); err != nil {
		return nil, err
	}
	o := settings.Overrides{Provider: f.provider, Model: f.model, API: f.api, BaseURL: f.baseURL}
	if f.preset != "" {
		p := presets[f.preset]
		p.name = f.preset
		url, stop, err := startPreset(p.name)
		if err != nil {
			return nil, err
		}
		rc.preset, rc.stop = &p, stop
		if p.waitForReset {
			st.Retry.WaitForReset.Enabled, st.Retry.WaitForReset.MarginMs = true, 0
		}
		o = settings.Overrides{Provider: "fake-llm", Model: "fake-model", API: settings.APIOpenAICompletions, BaseURL: url}
		if p.resume {
			o.API = settings.APIOpenAIResponses
			st.Retry.Streaming = settings.StreamResume
		}
	}
	var file *auth.File
	if rc.target, file, err = resolveTarget(st, o); err != nil {
		rc.close()
		return nil, err
	}
	if p := rc.preset; p != nil && p.resume {
		rc.target.Config.Resume = true
	}
	if p := rc.preset; p != nil && p.idleTimeoutMs > 0 {
		rc.target.Config.IdleTimeoutMs = p.idleTimeoutMs
	}
	if p := rc.preset; p != nil && p.window > 0 {
		// Into the target's model list rather than onto one llm.Model, so
		// that every path that describes the model from the target (the
		// credential rotation, set_model) carries the same window.
		rc.target.Config.Models = append([]settings.Model{{ID: rc.target.Model, ContextWindow: p.window}}, rc.target.Config.Models...)
	}
	if rc.model, err = modelFor(rc.target); err != nil {
		rc.close()
		return nil, &exitError{2, err}
	}
	rc.auth.Store(file)
	return rc, nil
}

func (rc *runConfig) close() {
	rc.stop()
	if err := rc.tel.Shutdown(context.Background()); err != nil {
		// Telemetry is never the run's failure: said once, and the run's
		// own exit status stands. The URL may hold a token: redacted.
		rc.stderr(redact.Line(err.Error()))
	}
}

// startTelemetry sets up export from the telemetry settings and the
// OTEL_* variables; off, it costs one look at the environment.
func (rc *runConfig) startTelemetry() error {
	t := rc.st.Telemetry
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{Enabled: t.Enabled, Endpoint: t.Endpoint, Protocol: t.Protocol, CaptureContent: t.CaptureContent}, os.Getenv, buildVersion())
	if err != nil {
		return &exitError{2, err}
	}
	rc.tel = tel
	return nil
}
