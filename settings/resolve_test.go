package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/retry"
)

func TestRetryPolicy(t *testing.T) {
	s, _, err := Load(layout(t,
		`{"retry": {"maxRetries": 4, "baseDelayMs": 500, "maxDelayMs": 10000, "jitter": 0.1},
		  "providers": {"groq": {"maxRetries": 8}, "local": {"maxRetries": 0}}}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	base := retry.Policy{MaxRetries: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 10 * time.Second, Jitter: 0.1, WaitForReset: retry.Default().WaitForReset}
	tests := []struct {
		provider string
		want     int
	}{
		{"openai", 4},  // no value of its own: retry.maxRetries
		{"groq", 8},    // its own value wins
		{"local", 0},   // 0 is a value, not "unset"
		{"unknown", 4}, // an ad-hoc provider has no entry
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			want := base
			want.MaxRetries = tt.want
			if diff := cmp.Diff(want, s.RetryPolicy(tt.provider), cmpopts.IgnoreFields(retry.Policy{}, "Rand")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The defaults of this package and of package retry are the same numbers.
func TestDefaultPolicyIsRetryDefault(t *testing.T) {
	got := Default().RetryPolicy("openai")
	if diff := cmp.Diff(retry.Default(), got, cmpopts.IgnoreFields(retry.Policy{}, "Rand")); diff != "" {
		t.Errorf("(-retry.Default +settings):\n%s", diff)
	}
	s := Default()
	s.Retry.Enabled = false
	if !s.RetryPolicy("openai").Disabled {
		t.Error("retry.enabled false does not disable the policy")
	}
	s.Retry.Streaming = StreamBeforeOutput
	if !s.RetryPolicy("openai").BeforeOutput {
		t.Error("retry.streaming beforeOutput is not the policy's BeforeOutput")
	}
	for name, p := range s.Providers {
		if p.MaxRetries != nil {
			t.Errorf("built-in provider %s sets maxRetries %d of its own", name, *p.MaxRetries)
		}
	}
}

func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	builtin := Builtin()
	withURL := func(p Provider, api, url string) Provider {
		if api != "" {
			p.API = api
		}
		p.BaseURL = url
		return p
	}
	tests := []struct {
		name     string
		settings string
		o        Overrides
		env      func(string) string
		want     Target
		err      string
	}{
		{
			name: "nothing configured, no key: sim",
			env:  env(),
			want: Target{Provider: Sim, Model: Sim, Config: builtin[Sim]},
		},
		{
			name: "a key in the environment picks its provider",
			env:  env("OPENAI_API_KEY", "sk-o", "GROQ_API_KEY", "gsk"),
			want: Target{Provider: "openai", Config: builtin["openai"], APIKey: "sk-o"},
		},
		{
			name:     "defaultProvider and defaultModel",
			settings: `{"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}`,
			env:      env("ANTHROPIC_API_KEY", "sk-a"),
			want:     Target{Provider: "anthropic", Model: "claude-sonnet-4-5", Config: builtin["anthropic"], APIKey: "sk-a"},
		},
		{
			name:     "flags win over the files; defaultModel is for the default provider only",
			settings: `{"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}`,
			o:        Overrides{Provider: "groq"},
			env:      env("GROQ_API_KEY", "gsk"),
			want:     Target{Provider: "groq", Config: builtin["groq"], APIKey: "gsk"},
		},
		{
			name: "--base-url and --api repoint a known provider for one run",
			o:    Overrides{Provider: "openai", Model: "m", API: APIOpenAIResponses, BaseURL: "http://127.0.0.1:9999/v1"},
			env:  env("OPENAI_API_KEY", "sk-o"),
			want: Target{Provider: "openai", Model: "m", Config: withURL(builtin["openai"], APIOpenAIResponses, "http://127.0.0.1:9999/v1"), APIKey: "sk-o"},
		},
		{
			name: "RALLY_API_KEY wins over apiKeyEnv",
			o:    Overrides{Provider: "openai"},
			env:  env("OPENAI_API_KEY", "sk-o", "RALLY_API_KEY", "sk-rally"),
			want: Target{Provider: "openai", Config: builtin["openai"], APIKey: "sk-rally"},
		},
		{
			name: "unknown provider with --api and --base-url is ad hoc",
			o:    Overrides{Provider: "lmstudio", Model: "qwen", API: APIOpenAICompletions, BaseURL: "http://127.0.0.1:1234/v1"},
			env:  env("RALLY_API_KEY", "k"),
			want: Target{Provider: "lmstudio", Model: "qwen", AdHoc: true, APIKey: "k",
				Config: Provider{API: APIOpenAICompletions, BaseURL: "http://127.0.0.1:1234/v1", TimeoutMs: DefaultTimeoutMs, IdleTimeoutMs: DefaultIdleTimeoutMs, MaxEventBytes: DefaultMaxEventBytes, MaxMessageBytes: DefaultMaxMessageBytes}},
		},
		{
			name: "--base-url alone is an ad-hoc openai-completions provider",
			o:    Overrides{BaseURL: "http://127.0.0.1:1234/v1"},
			env:  env(),
			want: Target{Provider: "custom", AdHoc: true,
				Config: Provider{API: APIOpenAICompletions, BaseURL: "http://127.0.0.1:1234/v1", TimeoutMs: DefaultTimeoutMs, IdleTimeoutMs: DefaultIdleTimeoutMs, MaxEventBytes: DefaultMaxEventBytes, MaxMessageBytes: DefaultMaxMessageBytes}},
		},
		{
			name:     "a provider from the settings file",
			settings: `{"providers": {"vllm": {"api": "openai-completions", "baseUrl": "http://gpu:8000/v1", "apiKeyEnv": "VLLM_KEY", "models": [{"id": "llama-3.3-70b"}], "maxRetries": 9}}}`,
			o:        Overrides{Provider: "vllm"},
			env:      env("VLLM_KEY", "v"),
			want: Target{Provider: "vllm", Model: "llama-3.3-70b", APIKey: "v",
				Config: Provider{API: APIOpenAICompletions, BaseURL: "http://gpu:8000/v1", APIKeyEnv: "VLLM_KEY", Models: []Model{{ID: "llama-3.3-70b"}},
					MaxRetries: ptr(9), TimeoutMs: DefaultTimeoutMs, IdleTimeoutMs: DefaultIdleTimeoutMs, MaxEventBytes: DefaultMaxEventBytes, MaxMessageBytes: DefaultMaxMessageBytes}},
		},
		{
			name: "unknown provider without --base-url",
			o:    Overrides{Provider: "nope"},
			env:  env(),
			err:  `resolve provider: unknown provider "nope" (known: anthropic, google, groq, local, openai, openrouter, sim; or give --base-url and --api for an ad-hoc one)`,
		},
		{
			name: "bad --api",
			o:    Overrides{Provider: "openai", API: "openai"},
			env:  env(),
			err:  `resolve provider: --api must be one of ` + strings.Join(apis.Names(), ", ") + `, got "openai"`,
		},
		{
			name: "bad --base-url",
			o:    Overrides{Provider: "local", BaseURL: "127.0.0.1:8080"},
			env:  env(),
			err:  `resolve provider: --base-url must be an http or https URL, got "127.0.0.1:8080"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := Load(layout(t, tt.settings, ""))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Resolve(tt.o, tt.env)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Resolve error = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetStringHidesKey(t *testing.T) {
	tg := Target{Provider: "openai", Model: "m", APIKey: "sk-secret", Config: Builtin()["openai"]}
	if s := tg.String(); strings.Contains(s, "sk-secret") {
		t.Errorf("String() = %q leaks the key", s)
	}
}

func TestParseModelRef(t *testing.T) {
	tests := []struct{ in, provider, model string }{
		{"openai/gpt-4.1", "openai", "gpt-4.1"},
		{"openrouter/anthropic/claude-sonnet-4", "openrouter", "anthropic/claude-sonnet-4"},
		{"gpt-4.1", "", ""},
		{"/m", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, m, err := ParseModelRef(tt.in)
			if p != tt.provider || m != tt.model || (err == nil) != (tt.provider != "") {
				t.Errorf("ParseModelRef = %q, %q, %v", p, m, err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
