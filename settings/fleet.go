package settings

import (
	"time"
)

// RedisURLEnv, when set, is the fleet's Redis URL for a run, whatever
// fleet.redis says (like RALLY_API_KEY, the environment is the one-run
// override). A password in it is fine: it is not stored anywhere.
const RedisURLEnv = "RALLY_REDIS_URL"

// Fleet defaults.
const (
	// DefaultFleetTimeoutMs bounds every Redis call: a slow or absent
	// Redis costs a prompt at most this much before rally works locally.
	DefaultFleetTimeoutMs = 200
	// DefaultBreakerFailures consecutive transient failures across the
	// fleet open a provider/model's breaker.
	DefaultBreakerFailures = 5
	// DefaultBreakerWindowMs is how close together those failures must be.
	DefaultBreakerWindowMs = 60000
	// DefaultBreakerOpenMs is how long an open breaker holds every agent
	// back before one probe request decides.
	DefaultBreakerOpenMs = 30000
	// DefaultBudgetWindowMs is the window the budgets count over: a minute.
	DefaultBudgetWindowMs = 60000
)

// Fleet is the fleet group: state shared across machines through Redis.
// The zero Fleet (no URL) shares nothing and changes nothing.
type Fleet struct {
	// Redis is a redis:// or rediss:// (TLS) URL without a password.
	// It has no schema pattern: the validator quotes a value that fails
	// one, and this one may hold a password by mistake. checkGo refuses a
	// password without quoting the value; the scheme and host are checked
	// when rally connects, with the password redacted.
	Redis string `json:"redis,omitempty" jsonschema_description:"Redis URL shared by the fleet: redis://host:6379/0, or rediss:// for TLS. No password here: name its variable in passwordEnv. RALLY_REDIS_URL, when set, wins. Empty: nothing is shared beyond this machine."`
	// PasswordEnv names the variable holding the Redis password; the
	// password itself never goes in a settings file.
	PasswordEnv string `json:"passwordEnv,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_description:"Name of the environment variable holding the Redis password (the password never goes in this file)."`
	// Namespace separates teams that share one Redis: keys go under
	// rally/<namespace>: instead of rally:, so that a Redis ACL user can be
	// limited to one team's keys.
	Namespace string `json:"namespace,omitempty" jsonschema:"pattern=^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$" jsonschema_description:"Separates teams sharing one Redis: processes with different namespaces share nothing, and their keys start with rally/<namespace>: (rally: without one), so a Redis ACL user can be limited to them. Empty: the default namespace."`
	// TimeoutMs bounds each Redis call; 0 means DefaultFleetTimeoutMs.
	TimeoutMs int `json:"timeoutMs" jsonschema:"minimum=1,maximum=10000,default=200" jsonschema_description:"Longest wait for Redis per call, in milliseconds. A Redis slower than this, or down, means local behaviour (one warning) until it answers again."`
	// Budgets are per-credential request and token budgets, by provider.
	Budgets map[string]Budget `json:"budgets,omitempty" jsonschema_description:"Per-credential request and token budgets shared by the fleet, by provider name. A request that would exceed one waits (visibly, cancellably) instead of being sent."`
	Breaker Breaker           `json:"breaker" jsonschema_description:"The circuit breaker per provider and model, shared by the fleet."`
}

// Budget is one fleet.budgets.<provider> entry. Zero limits are no limit.
type Budget struct {
	RequestsPerMinute int `json:"requestsPerMinute,omitempty" jsonschema:"minimum=0,maximum=100000000" jsonschema_description:"Most requests per minute (per windowMs) each credential of this provider sends, across the fleet. 0: no limit."`
	TokensPerMinute   int `json:"tokensPerMinute,omitempty" jsonschema:"minimum=0,maximum=1000000000" jsonschema_description:"Most estimated input tokens per minute (per windowMs) each credential of this provider sends, across the fleet. 0: no limit."`
	// WindowMs rescales "minute"; 0 means a minute.
	WindowMs int `json:"windowMs,omitempty" jsonschema:"minimum=100,maximum=86400000,default=60000" jsonschema_description:"The window the two limits count over, in milliseconds (default a minute). For providers that state limits over another window, and for tests."`
}

// Breaker is the fleet.breaker group. Zero fields take their defaults;
// Failures below 0 is refused by the schema.
type Breaker struct {
	Failures int `json:"failures" jsonschema:"minimum=0,maximum=1000,default=5" jsonschema_description:"Consecutive transient failures of a provider/model across the fleet that open its breaker. 0 turns the breaker off."`
	WindowMs int `json:"windowMs" jsonschema:"minimum=1,maximum=3600000,default=60000" jsonschema_description:"The failures must fall within this many milliseconds of the first."`
	OpenMs   int `json:"openMs" jsonschema:"minimum=1,maximum=3600000,default=30000" jsonschema_description:"How long an open breaker holds every agent back before one probe request decides whether to close it."`
}

func defaultFleet() Fleet {
	return Fleet{
		TimeoutMs: DefaultFleetTimeoutMs,
		Breaker:   Breaker{Failures: DefaultBreakerFailures, WindowMs: DefaultBreakerWindowMs, OpenMs: DefaultBreakerOpenMs},
	}
}

// URL is the fleet's Redis URL: RALLY_REDIS_URL when set, else fleet.redis.
// fromEnv says which.
func (f Fleet) URL(getenv func(string) string) (url string, fromEnv bool) {
	if u := getenv(RedisURLEnv); u != "" {
		return u, true
	}
	return f.Redis, false
}

// Timeout is the longest wait per Redis call.
func (f Fleet) Timeout() time.Duration { return ms(f.TimeoutMs, DefaultFleetTimeoutMs) }

// Window is the budget's window.
func (b Budget) Window() time.Duration { return ms(b.WindowMs, DefaultBudgetWindowMs) }

// Window is how close together the breaker's failures must be.
func (b Breaker) Window() time.Duration { return ms(b.WindowMs, DefaultBreakerWindowMs) }

// Open is how long an open breaker holds agents back.
func (b Breaker) Open() time.Duration { return ms(b.OpenMs, DefaultBreakerOpenMs) }
