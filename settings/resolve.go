package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/retry"
)

// KeyEnv is the environment variable whose value, when set, is the API key
// of every run, whatever the provider's apiKeyEnv says.
const KeyEnv = "RALLY_API_KEY"

// RetryPolicy returns the retry budget for calls to provider: the retry
// group, with the provider's own maxRetries (when it has one) in place of
// retry.maxRetries. It is a session.Config.Retry: the session asks it for
// whichever provider a call goes to, after a switch or a fallback too.
func (s *Settings) RetryPolicy(provider string) retry.Policy {
	r := s.Retry
	p := retry.Policy{
		Disabled:   !r.Enabled,
		MaxRetries: r.MaxRetries,
		BaseDelay:  time.Duration(r.BaseDelayMs) * time.Millisecond,
		MaxDelay:   time.Duration(r.MaxDelayMs) * time.Millisecond,
		Jitter:     r.Jitter,
		// The streaming mode is the policy's: it decides whether a
		// stream that failed mid-way is retried.
		BeforeOutput: r.Streaming == StreamBeforeOutput,
		Resume:       r.Streaming == StreamResume,
		WaitForReset: r.WaitForReset.Policy(),
	}
	if n := s.Providers[provider].MaxRetries; n != nil {
		p.MaxRetries = *n
	}
	return p
}

// Policy is the setting as the retry policy reads it: a margin of 0 is
// none (the policy reads 0 as its default).
func (w WaitForReset) Policy() retry.WaitForReset {
	margin := time.Duration(w.MarginMs) * time.Millisecond
	if w.MarginMs <= 0 {
		margin = -1
	}
	return retry.WaitForReset{Enabled: w.Enabled, MaxWait: time.Duration(w.MaxWaitMs) * time.Millisecond, Margin: margin}
}

// Timeout is the connect and first-byte timeout.
func (p Provider) Timeout() time.Duration { return ms(p.TimeoutMs, DefaultTimeoutMs) }

// IdleTimeout is the longest silence a stream may keep.
func (p Provider) IdleTimeout() time.Duration { return ms(p.IdleTimeoutMs, DefaultIdleTimeoutMs) }

// Timeout is how long the hook's command may run.
func (h Hook) Timeout() time.Duration { return ms(h.TimeoutMs, DefaultHookTimeoutMs) }

func ms(v, def int) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Millisecond
}

// Overrides are the one-run flags --provider, --model, --api and --base-url.
// Empty fields override nothing.
type Overrides struct {
	Provider, Model, API, BaseURL string
}

// Target is the provider and model one run talks to.
type Target struct {
	Provider string   // the provider's name, e.g. "openai"
	Model    string   // "" when neither flags, settings nor the provider name one
	Config   Provider // the provider entry with the overrides applied
	// APIKey is $RALLY_API_KEY, else the provider's apiKeyEnv variable,
	// else "" (no key, or one that the auth store supplies).
	APIKey string
	// AdHoc is true for a provider made up from --api and --base-url.
	AdHoc bool
}

// String describes the target without its key, so that logging a Target
// cannot leak one.
func (t Target) String() string {
	key := "no key"
	if t.APIKey != "" {
		key = "key set"
	}
	return fmt.Sprintf("%s/%s (%s %s, %s)", t.Provider, t.Model, t.Config.API, t.Config.BaseURL, key)
}

// Resolve picks the provider, model and key for one run. Flags win over
// the files. The provider is, in order: --provider; defaultProvider; an
// ad-hoc "custom" provider when --base-url is given; the first of
// anthropic, openai, google, openrouter, groq whose key variable is set;
// sim. A provider name that no file defines is an error unless --base-url
// is given, which makes it ad hoc (its API is --api, by default
// openai-completions). The model is --model; defaultModel when the
// provider is the default one; the provider's first listed model; else ""
// for the caller's catalog to fill.
func (s *Settings) Resolve(o Overrides, getenv func(string) string) (Target, error) {
	name := o.Provider
	if name == "" {
		name = s.DefaultProvider
	}
	if name == "" && o.BaseURL != "" {
		name = "custom"
	}
	if name == "" {
		name = Sim
		for _, n := range builtinOrder() {
			if env := s.Providers[n].APIKeyEnv; env != "" && getenv(env) != "" {
				name = n
				break
			}
		}
	}
	t := Target{Provider: name}
	p, ok := s.Providers[name]
	if !ok {
		if o.BaseURL == "" {
			known := slices.Sorted(func(yield func(string) bool) {
				for n := range s.Providers {
					if !yield(n) {
						return
					}
				}
			})
			return Target{}, fmt.Errorf("resolve provider: unknown provider %q (known: %s; or give --base-url and --api for an ad-hoc one)", name, strings.Join(known, ", "))
		}
		p = Provider{API: APIOpenAICompletions}
		t.AdHoc = true
	}
	if o.API != "" {
		if _, ok := apis.Lookup(o.API); !ok {
			return Target{}, fmt.Errorf("resolve provider: --api must be one of %s, got %q", strings.Join(apis.Names(), ", "), o.API)
		}
		p.API = o.API
	}
	if o.BaseURL != "" {
		if !validURL(o.BaseURL) {
			return Target{}, fmt.Errorf("resolve provider: --base-url must be an http or https URL, got %q", o.BaseURL)
		}
		p.BaseURL = o.BaseURL
	}
	// A provider streams resumably only when retry.streaming asks for it
	// too: one switch turns resuming off everywhere.
	p.Resume = p.Resume && s.Retry.Streaming == StreamResume
	p.TimeoutMs = int(p.Timeout() / time.Millisecond)
	p.IdleTimeoutMs = int(p.IdleTimeout() / time.Millisecond)
	if p.MaxEventBytes <= 0 {
		p.MaxEventBytes = DefaultMaxEventBytes
	}
	if p.MaxMessageBytes <= 0 {
		p.MaxMessageBytes = DefaultMaxMessageBytes
	}
	t.Config = p

	switch {
	case o.Model != "":
		t.Model = o.Model
	case name == s.DefaultProvider && s.DefaultModel != "":
		t.Model = s.DefaultModel
	case len(p.Models) > 0:
		t.Model = p.Models[0].ID
	}

	if k := getenv(KeyEnv); k != "" {
		t.APIKey = k
	} else if p.APIKeyEnv != "" {
		t.APIKey = getenv(p.APIKeyEnv)
	}
	return t, nil
}

// KeyOrder is the order in which an unset defaultProvider looks for an API
// key: first-party APIs first, then the routers.
func KeyOrder() []string { return builtinOrder() }

func builtinOrder() []string {
	return []string{"anthropic", "openai", "google", "openrouter", "groq"}
}

// ParseModelRef splits a "provider/model" reference at its first slash; the
// model part may hold more (openrouter/anthropic/claude-sonnet-4).
func ParseModelRef(ref string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(ref, "/")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("parse model %q: want provider/model", ref)
	}
	return provider, model, nil
}

// Get returns the effective value at key (retry.maxRetries,
// providers.openai.baseUrl, hooks[0]) as indented JSON; "" gives the whole
// settings. A setting with no value, such as a provider's unset
// maxRetries, is null. A key that is not a setting is an error.
func (s *Settings) Get(key string) (json.RawMessage, error) {
	var path []string
	if key != "" {
		p, err := settable(key)
		if err != nil {
			return nil, fmt.Errorf("get settings: %w", err)
		}
		path = p
	}
	v, ok := lookup(toDoc(s), path)
	if !ok {
		v = nil
	}
	return bytes.TrimSuffix(encodeDoc(v, "  "), []byte("\n")), nil
}
