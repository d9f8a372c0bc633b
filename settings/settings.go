// Package settings is rally's configuration: the Go types of every setting,
// their defaults, the layered load of the global and project files, the
// validation that names the file, the JSON path and what was expected, and an
// atomic save that keeps what rally does not understand.
//
// Precedence, lowest first: the defaults of this package, the global file
// ($RALLY_HOME/settings.json, RALLY_HOME defaulting to ~/.rally), the project
// file (.rally/settings.json in the working directory), and finally the
// one-run flags and environment (see Overrides). Files are merged key by key:
// objects merge recursively, anything else (arrays included) replaces.
//
// The JSON Schema in schema.json is generated from the types below (run
// `go generate ./settings/`) and is what validation uses, so the struct tags
// are the single source of the rules.
package settings

import (
	"time"

	"github.com/rally-agent/rally/agent"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/anthropic"
	"github.com/rally-agent/rally/llm/gemini"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llm/sim"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

//go:generate go test -run TestSchemaUpToDate|TestSchemaTreeUpToDate -update

// Defaults. Each one is also written into the schema as its "default"
// (the struct tags below repeat them, and TestSchemaDefaults holds the
// two together). The retry, provider, agent and compaction defaults are
// the library's own constants, so rally's settings and a Go program's
// zero values agree by construction.
const (
	DefaultMaxRetries       = retry.DefaultMaxRetries
	DefaultBaseDelayMs      = int(retry.DefaultBaseDelay / time.Millisecond)
	DefaultMaxDelayMs       = int(retry.DefaultMaxDelay / time.Millisecond)
	DefaultMaxWaitMs        = int(retry.DefaultMaxWait / time.Millisecond)
	DefaultResetMarginMs    = int(retry.DefaultResetMargin / time.Millisecond)
	DefaultMaxTurns         = agent.DefaultMaxTurns
	DefaultThresholdPercent = session.DefaultThresholdPercent
	DefaultKeepRecentTokens = session.DefaultKeepRecentTokens
	DefaultHookTimeoutMs    = 5000
	// DefaultMaxOutputBytes and DefaultMaxOutputLines cap what one tool
	// call returns to the model: enough for a long log or a whole source
	// file, small enough that one cat of a big file cannot fill a context.
	DefaultMaxOutputBytes = 50 << 10
	DefaultMaxOutputLines = 2000
	// DefaultHooksGraceMs is how long rally waits at exit for hooks still
	// running: long enough for a notification, short enough that nobody
	// waits on a hung one.
	DefaultHooksGraceMs = 1000
	// DefaultHooksMaxProcesses bounds the hook processes running at once.
	DefaultHooksMaxProcesses = 4
	// DefaultTimeoutMs bounds connecting and waiting for the first byte of
	// a response (llm.DefaultTimeout).
	DefaultTimeoutMs = int(llm.DefaultTimeout / time.Millisecond)
	// DefaultIdleTimeoutMs ends a stream that sent nothing for this long
	// (llm.DefaultIdleTimeout).
	DefaultIdleTimeoutMs = int(llm.DefaultIdleTimeout / time.Millisecond)
	// DefaultMaxEventBytes caps one server-sent event
	// (llm.DefaultMaxEventBytes, 64 MiB).
	DefaultMaxEventBytes = llm.DefaultMaxEventBytes
	// DefaultMaxMessageBytes caps one streamed response
	// (llm.DefaultMaxMessageBytes, 128 MiB).
	DefaultMaxMessageBytes = llm.DefaultMaxMessageBytes
)

// Streaming modes of retry.streaming.
const (
	// StreamRestart retries a stream that failed mid-way and discards its
	// partial output with a message_discarded event.
	StreamRestart = "restart"
	// StreamBeforeOutput retries only if nothing visible was emitted yet,
	// for sinks that cannot take text back.
	StreamBeforeOutput = "beforeOutput"
	// StreamResume continues a stream that dropped mid-way from where it
	// stopped, on providers that opted in (providers.<name>.resume) and
	// whose API can (Responses background mode, continue_final_message);
	// the others restart as with StreamRestart.
	StreamResume = "resume"
)

// API names of providers.<name>.api, the same as the pi coding agent's
// (package llm/apis lists them all, with what speaks each).
const (
	APIOpenAICompletions = llm.APIOpenAICompletions
	APIOpenAIResponses   = llm.APIOpenAIResponses
	APIAnthropicMessages = llm.APIAnthropicMessages
	APIGoogle            = llm.APIGoogle
	// APISim is the embedded offline model; only the sim provider uses it.
	APISim = llm.APISim
)

// Sim is the name of the always-present offline provider, and of its model.
const Sim = "sim"

// Settings is the effective configuration. Load returns it with every
// default filled in; the zero Settings is not the defaults (retry and
// compaction are off and every number is 0), so build one with Default.
type Settings struct {
	// Schema lets a file name its JSON Schema for editors; rally ignores it.
	Schema string `json:"$schema,omitempty" jsonschema_description:"URL or path of this file's JSON Schema, for editors. Ignored by rally."`
	// DefaultProvider is used when --provider is not given. Empty means: the
	// first built-in provider whose API key variable is set, else sim.
	DefaultProvider string `json:"defaultProvider" jsonschema_description:"Provider used when --provider is not given. Empty picks the first of anthropic, openai, google, openrouter, groq whose API key variable is set, else sim."`
	// DefaultModel is the model id used with DefaultProvider when --model is
	// not given. Empty means the provider's first listed model.
	DefaultModel string              `json:"defaultModel" jsonschema_description:"Model id used with the default provider when --model is not given. Empty means the provider's first listed model."`
	Agent        Agent               `json:"agent" jsonschema_description:"The agent loop."`
	Retry        Retry               `json:"retry" jsonschema_description:"Automatic retry of model calls that failed in a way time can fix (overload, rate limit, 5xx, dropped connection)."`
	Compaction   Compaction          `json:"compaction" jsonschema_description:"Summarising older messages when the context fills up."`
	Providers    map[string]Provider `json:"providers" jsonschema_description:"Model providers by name. Built-in entries exist for openai, anthropic, google, openrouter, groq, local and sim; an entry with the same name merges over the built-in one."`
	Hooks        []Hook              `json:"hooks" jsonschema_description:"Commands run for session events, off the hot path."`
	// HooksGraceMs may be 0: rally then kills running hooks as it exits.
	HooksGraceMs      int   `json:"hooksGraceMs" jsonschema:"minimum=0,maximum=60000,default=1000" jsonschema_description:"At exit, how many milliseconds rally waits for hooks still running or queued before it kills them. 0 kills them at once."`
	HooksMaxProcesses int   `json:"hooksMaxProcesses" jsonschema:"minimum=1,maximum=64,default=4" jsonschema_description:"Most hook processes running at once, over all hooks. Events a busy hook cannot take are dropped and the count logged."`
	Fleet             Fleet `json:"fleet" jsonschema_description:"Sharing usage-limit marks, cooldowns, budgets and a circuit breaker across machines through Redis."`
	Tools             Tools `json:"tools" jsonschema_description:"The built-in tools read, write, edit and bash: confirmation, environment and output caps."`

	// Telemetry is OpenTelemetry export (telemetry.go).
	Telemetry Telemetry `json:"telemetry" jsonschema_description:"OpenTelemetry traces and metrics over OTLP (docs/telemetry.md). Off by default; the standard OTEL_* variables configure it too and win over these keys."`
}

// Tools is the tools group (README, "Tools and secrets"). Load fills both
// caps; in a hand-built Tools 0 means their defaults.
type Tools struct {
	// Confirm lists the tools the terminal UI asks about before running
	// them; other front ends (print, RPC) do not ask.
	Confirm []string `json:"confirm" jsonschema:"enum=read,enum=write,enum=edit,enum=bash" jsonschema_description:"Tools the terminal UI asks about before running them (read, write, edit, bash). Empty: none."`
	// AllowEnv names the provider key variables that tool commands may
	// still see; every other key variable is removed from their
	// environment. A key a tool prints is redacted either way.
	AllowEnv       []string `json:"allowEnv" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_description:"Key variables (e.g. OPENAI_API_KEY) that bash commands may still see. By default every provider key variable, RALLY_API_KEY, the keyEnv variables of auth.json and any *_API_KEY are removed from their environment; a known key in tool output is redacted either way."`
	MaxOutputBytes int      `json:"maxOutputBytes" jsonschema:"minimum=1024,maximum=67108864,default=51200" jsonschema_description:"Most bytes of output one tool call returns to the model; the rest is cut with a note on how to read it (read offsets)."`
	MaxOutputLines int      `json:"maxOutputLines" jsonschema:"minimum=10,maximum=1000000,default=2000" jsonschema_description:"Most lines of output one tool call returns to the model; whichever of the two caps comes first applies."`
	// Sandbox confines bash commands (internal/sandbox): "workspace" or
	// "off".
	Sandbox string `json:"sandbox" jsonschema:"enum=workspace,enum=off,default=workspace" jsonschema_description:"workspace: on Linux, bash commands and everything they start run under a Landlock ruleset: auth.json and auth-marks.json cannot be opened at all, and writes go only to the working directory, the temporary directory and sandboxPaths. off: no sandbox (the command-line check and the redactor still apply)."`
	// SandboxPaths are more directories sandboxed commands may write.
	// Each is absolute or starts at the home directory (~/): a relative
	// path would mean wherever rally happens to start.
	SandboxPaths []string `json:"sandboxPaths" jsonschema:"minLength=1,pattern=^(/|~/|~$)" jsonschema_description:"More directories (or files) sandboxed bash commands may write, e.g. ~/.cache/go-build: absolute paths, or ~/ for the home directory."`
	// SandboxNoNetwork refuses TCP to sandboxed commands.
	SandboxNoNetwork bool `json:"sandboxNoNetwork" jsonschema:"default=false" jsonschema_description:"true: sandboxed bash commands can neither connect nor listen over TCP (Landlock ABI 4, Linux 6.7)."`
}

// Modes of tools.sandbox.
const (
	SandboxWorkspace = "workspace"
	SandboxOff       = "off"
)

// Agent is the agent loop's group. Zero MaxTurns means no model call at all
// would be allowed, so Load always fills it.
type Agent struct {
	MaxTurns int `json:"maxTurns" jsonschema:"minimum=1,maximum=10000,default=50" jsonschema_description:"Most model calls one prompt may make (tool-call turns included) before the run stops."`
}

// Retry is the retry group (README, "Every key"). The zero Retry is disabled.
type Retry struct {
	Enabled bool `json:"enabled" jsonschema:"default=true" jsonschema_description:"false: no retry chain ever starts."`
	// MaxRetries counts retries after the first failure; 0 never retries.
	MaxRetries int `json:"maxRetries" jsonschema:"minimum=0,maximum=100,default=3" jsonschema_description:"Retries after the first failure; 0 behaves exactly as a build without retry. A provider's own maxRetries overrides it."`
	// BaseDelayMs is at least 1 when loaded: retry.Policy reads 0 as its
	// default, so a 0 here would silently mean 2000.
	BaseDelayMs int `json:"baseDelayMs" jsonschema:"minimum=1,maximum=3600000,default=2000" jsonschema_description:"Backoff base in milliseconds: retry n waits baseDelayMs * 2^(n-1) (2000, 4000, 8000 ...)."`
	MaxDelayMs  int `json:"maxDelayMs" jsonschema:"minimum=1,maximum=86400000,default=60000" jsonschema_description:"Longest single wait in milliseconds. A server asking for longer means switch credential or model, or fail fast; never a silent long sleep."`
	// Jitter is a fraction from 0 to 1; 0 adds nothing.
	Jitter    float64 `json:"jitter" jsonschema:"minimum=0,maximum=1,default=0" jsonschema_description:"Fraction 0-1: adds a random 0..jitter*delay on top of each wait (never shortens a server's minimum). For fleets of agents."`
	Streaming string  `json:"streaming" jsonschema:"enum=restart,enum=beforeOutput,enum=resume,default=restart" jsonschema_description:"restart: a stream that fails mid-way is retried and its partial output discarded; beforeOutput: retry only if nothing visible was emitted yet; resume: continue a dropped stream where it stopped, on providers with resume set (elsewhere restart)."`
	// FallbackModels are "provider/model" strings; the model part may itself
	// contain slashes (openrouter/anthropic/claude-sonnet-4).
	FallbackModels []string     `json:"fallbackModels" jsonschema:"pattern=^[^/]+/.+$" jsonschema_description:"\"provider/model\" list tried in order when a usage limit or a too-long wait cannot be waited out."`
	WaitForReset   WaitForReset `json:"waitForReset" jsonschema_description:"Wait out a usage limit whose stated reset is further than maxDelayMs, when no other credential or fallback model is left (off by default)."`
}

// WaitForReset is retry.waitForReset (retry.WaitForReset). After Load
// MaxWaitMs and MarginMs hold their defaults when the file leaves them out.
type WaitForReset struct {
	Enabled   bool `json:"enabled" jsonschema:"default=false" jsonschema_description:"true: wait until a stated usage-limit reset plus marginMs, then retry once; a second limit right after it backs off as a transient error."`
	MaxWaitMs int  `json:"maxWaitMs" jsonschema:"minimum=1,maximum=604800000,default=21600000" jsonschema_description:"Longest stated reset waited out, in milliseconds (6 hours by default); a later reset fails fast naming it."`
	MarginMs  int  `json:"marginMs" jsonschema:"minimum=0,maximum=3600000,default=5000" jsonschema_description:"Milliseconds added to the stated reset before the retry."`
}

// Compaction is the compaction group. The zero Compaction is disabled.
type Compaction struct {
	Enabled          bool `json:"enabled" jsonschema:"default=true" jsonschema_description:"Compact automatically when the context is nearly full or overflows."`
	ThresholdPercent int  `json:"thresholdPercent" jsonschema:"minimum=1,maximum=100,default=85" jsonschema_description:"Compact when the context is this full, in percent of the model's context window."`
	KeepRecentTokens int  `json:"keepRecentTokens" jsonschema:"minimum=0,maximum=10000000,default=20000" jsonschema_description:"Tokens of the most recent messages kept verbatim; older ones are summarised."`
}

// Provider is one providers.<name> entry. After Load, TimeoutMs,
// IdleTimeoutMs, MaxEventBytes and MaxMessageBytes are never 0; in a hand-built Provider 0
// means their default.
type Provider struct {
	// API's enum and description in the schema are the registry's
	// (llm/apis), written in by the schema's generator.
	API       string  `json:"api,omitempty"`
	BaseURL   string  `json:"baseUrl,omitempty" jsonschema_description:"Base URL of the API, e.g. https://api.openai.com/v1."`
	APIKeyEnv string  `json:"apiKeyEnv,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_description:"Name of the environment variable holding the API key (the key itself never goes in this file). RALLY_API_KEY, when set, wins."`
	Models    []Model `json:"models,omitempty" jsonschema_description:"Models offered by this provider, first one the default."`
	// MaxRetries, when set, replaces retry.maxRetries for calls to this
	// provider; nil inherits it.
	MaxRetries    *int `json:"maxRetries,omitempty" jsonschema:"minimum=0,maximum=100" jsonschema_description:"Overrides retry.maxRetries for calls to this provider. Unset: retry.maxRetries applies."`
	TimeoutMs     int  `json:"timeoutMs,omitempty" jsonschema:"minimum=1,maximum=3600000,default=30000" jsonschema_description:"Connect and first-byte timeout in milliseconds."`
	IdleTimeoutMs int  `json:"idleTimeoutMs,omitempty" jsonschema:"minimum=1,maximum=3600000,default=60000" jsonschema_description:"A stream that sends nothing for this many milliseconds fails with a transient (retryable) error."`
	// MaxEventBytes caps one server-sent event of this provider's streams.
	MaxEventBytes int `json:"maxEventBytes,omitempty" jsonschema:"minimum=1024,maximum=1073741824,default=67108864" jsonschema_description:"Largest single server-sent event in bytes (64 MiB by default). A bigger one fails the stream at once with a fatal 'event too large' error and is never held in memory whole."`
	// Resume opts this provider in to resuming dropped streams when
	// retry.streaming is "resume"; off by default because it costs
	// something (see the description).
	Resume bool `json:"resume,omitempty" jsonschema_description:"With retry.streaming resume: stream so that a dropped stream continues where it stopped. openai-responses uses background mode (the provider stores the response for about 10 minutes, which zero data retention forbids, and the first token comes later); openai-completions sends the partial answer back with continue_final_message (vLLM, SGLang; text only). Other APIs restart."`
	// MaxMessageBytes caps the whole response of one streamed message.
	MaxMessageBytes int `json:"maxMessageBytes,omitempty" jsonschema:"minimum=65536,maximum=4294967296,default=134217728" jsonschema_description:"Most bytes one streamed response may take (128 MiB by default). Past it, or past 4 times the model's maxTokens of output, the stream fails with a fatal 'message too large' error: a server that does not stop cannot fill the memory."`
}

// Model is one entry of providers.<name>.models. Zero numbers mean unknown.
type Model struct {
	ID            string `json:"id" jsonschema:"required,minLength=1" jsonschema_description:"Model id as the API expects it."`
	Name          string `json:"name,omitempty" jsonschema_description:"Human-readable name."`
	ContextWindow int    `json:"contextWindow,omitempty" jsonschema:"minimum=1" jsonschema_description:"Context window in tokens."`
	MaxTokens     int    `json:"maxTokens,omitempty" jsonschema:"minimum=1" jsonschema_description:"Most output tokens per response."`
	Reasoning     bool   `json:"reasoning,omitempty" jsonschema_description:"The model supports thinking / reasoning."`
	Cost          Cost   `json:"cost,omitzero" jsonschema_description:"Price in US dollars per million tokens."`
}

// Cost is a price in US dollars per million tokens. Zero means free or
// unknown.
type Cost struct {
	Input      float64 `json:"input,omitempty" jsonschema:"minimum=0" jsonschema_description:"Per million input tokens."`
	Output     float64 `json:"output,omitempty" jsonschema:"minimum=0" jsonschema_description:"Per million output tokens."`
	CacheRead  float64 `json:"cacheRead,omitempty" jsonschema:"minimum=0" jsonschema_description:"Per million tokens read from the prompt cache."`
	CacheWrite float64 `json:"cacheWrite,omitempty" jsonschema:"minimum=0" jsonschema_description:"Per million tokens written to the prompt cache."`
}

// Hook runs a command for session events. After Load TimeoutMs
// is never 0; in a hand-built Hook 0 means DefaultHookTimeoutMs.
type Hook struct {
	On        []string `json:"on" jsonschema:"required,minItems=1" jsonschema_description:"Event types that run the command."`
	Command   []string `json:"command" jsonschema:"required,minItems=1,minLength=1" jsonschema_description:"Program and arguments, run without a shell; the event arrives as one JSON line on stdin."`
	TimeoutMs int      `json:"timeoutMs,omitempty" jsonschema:"minimum=1,maximum=3600000,default=5000" jsonschema_description:"The command is killed after this many milliseconds."`
}

// Default returns the settings that apply when no file says otherwise.
func Default() *Settings {
	return &Settings{
		Agent: Agent{MaxTurns: DefaultMaxTurns},
		Retry: Retry{
			Enabled:        true,
			MaxRetries:     DefaultMaxRetries,
			BaseDelayMs:    DefaultBaseDelayMs,
			MaxDelayMs:     DefaultMaxDelayMs,
			Streaming:      StreamRestart,
			FallbackModels: []string{},
			WaitForReset:   WaitForReset{MaxWaitMs: DefaultMaxWaitMs, MarginMs: DefaultResetMarginMs},
		},
		Compaction: Compaction{
			Enabled:          true,
			ThresholdPercent: DefaultThresholdPercent,
			KeepRecentTokens: DefaultKeepRecentTokens,
		},
		Providers:         Builtin(),
		Hooks:             []Hook{},
		HooksGraceMs:      DefaultHooksGraceMs,
		HooksMaxProcesses: DefaultHooksMaxProcesses,
		Fleet:             defaultFleet(),
		Tools: Tools{
			Confirm:        []string{},
			AllowEnv:       []string{},
			MaxOutputBytes: DefaultMaxOutputBytes,
			MaxOutputLines: DefaultMaxOutputLines,
			Sandbox:        SandboxWorkspace,
			SandboxPaths:   []string{},
		},
	}
}

// Builtin returns the built-in provider entries. Their models lists are
// empty (the llm catalog knows them) except sim's.
func Builtin() map[string]Provider {
	p := func(api, url, env string) Provider {
		return Provider{API: api, BaseURL: url, APIKeyEnv: env, TimeoutMs: DefaultTimeoutMs, IdleTimeoutMs: DefaultIdleTimeoutMs, MaxEventBytes: DefaultMaxEventBytes, MaxMessageBytes: DefaultMaxMessageBytes}
	}
	// A vendor's own API root is its client's default (llm.APIDef), and an
	// OpenAI-compatible service's is its models' in the catalog: each is
	// written once, there.
	own := func(d llm.APIDef, env string) Provider { return p(d.Name, d.DefaultBaseURL, env) }
	offline := own(sim.API, "")
	offline.Models = []Model{{ID: Sim, Name: "rally sim (offline)"}}
	return map[string]Provider{
		"openai":     own(openai.CompletionsAPI, "OPENAI_API_KEY"),
		"anthropic":  own(anthropic.API, "ANTHROPIC_API_KEY"),
		"google":     own(gemini.API, "GEMINI_API_KEY"),
		"openrouter": p(APIOpenAICompletions, catalogURL("openrouter"), "OPENROUTER_API_KEY"),
		"groq":       p(APIOpenAICompletions, catalogURL("groq"), "GROQ_API_KEY"),
		"local":      p(APIOpenAICompletions, "http://127.0.0.1:8080/v1", ""),
		Sim:          offline,
	}
}

// catalogURL is the base URL the catalog's models of provider are served at.
func catalogURL(provider string) string {
	for _, m := range llm.Catalog() {
		if m.Provider == provider && m.BaseURL != "" {
			return m.BaseURL
		}
	}
	return ""
}

// normalize fills the defaults that live inside maps and arrays, which the
// key-by-key merge with the defaults cannot reach.
func (s *Settings) normalize() {
	for name, p := range s.Providers {
		if p.TimeoutMs == 0 {
			p.TimeoutMs = DefaultTimeoutMs
		}
		if p.IdleTimeoutMs == 0 {
			p.IdleTimeoutMs = DefaultIdleTimeoutMs
		}
		if p.MaxEventBytes == 0 {
			p.MaxEventBytes = DefaultMaxEventBytes
		}
		if p.MaxMessageBytes == 0 {
			p.MaxMessageBytes = DefaultMaxMessageBytes
		}
		s.Providers[name] = p
	}
	for i := range s.Hooks {
		if s.Hooks[i].TimeoutMs == 0 {
			s.Hooks[i].TimeoutMs = DefaultHookTimeoutMs
		}
	}
	if s.Retry.FallbackModels == nil {
		s.Retry.FallbackModels = []string{}
	}
	if s.Hooks == nil {
		s.Hooks = []Hook{}
	}
	if s.Tools.Confirm == nil {
		s.Tools.Confirm = []string{}
	}
	if s.Tools.AllowEnv == nil {
		s.Tools.AllowEnv = []string{}
	}
}
