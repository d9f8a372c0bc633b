package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rally-agent/rally/llm/apis"
	"github.com/rally-agent/rally/session"
)

func TestValidationMessages(t *testing.T) {
	tests := []struct {
		name    string
		project string
		errs    []string // every error, in order
		warns   []string
	}{
		{
			name:    "wrong type",
			project: `{"retry": {"maxRetries": "three"}}`,
			errs:    []string{`.rally/settings.json: retry.maxRetries: must be an integer from 0 to 100, got "three"`},
		},
		{
			name:    "out of range",
			project: `{"retry": {"maxRetries": 500, "jitter": 1.5}}`,
			errs: []string{
				`.rally/settings.json: retry.jitter: must be a number from 0 to 1, got 1.5`,
				`.rally/settings.json: retry.maxRetries: must be an integer from 0 to 100, got 500`,
			},
		},
		{
			name:    "integer written with a fraction",
			project: `{"agent": {"maxTurns": 2.5}}`,
			errs:    []string{`.rally/settings.json: agent.maxTurns: must be an integer from 1 to 10000, got 2.5`},
		},
		{
			name:    "integer with a fraction inside a map",
			project: `{"providers": {"openai": {"maxRetries": 2.0}}}`,
			errs:    []string{`.rally/settings.json: providers.openai.maxRetries: must be an integer from 0 to 100, got 2.0`},
		},
		{
			name:    "unknown enum value",
			project: `{"retry": {"streaming": "never"}, "providers": {"x": {"api": "openai", "baseUrl": "http://h"}}}`,
			errs: []string{
				`.rally/settings.json: providers.x.api: must be one of ` + quotedAPIs() + `, got "openai"`,
				`.rally/settings.json: retry.streaming: must be one of "restart", "beforeOutput", "resume", got "never"`,
			},
		},
		{
			name:    "wrong type of group",
			project: `{"retry": true}`,
			errs:    []string{`.rally/settings.json: retry: must be an object, got true`},
		},
		{
			name:    "pattern",
			project: `{"retry": {"fallbackModels": ["gpt-4.1"]}}`,
			errs:    []string{`.rally/settings.json: retry.fallbackModels[0]: must be a "provider/model" string, got "gpt-4.1"`},
		},
		{
			name:    "a key pasted where its variable name goes is not echoed",
			project: `{"providers": {"openai": {"apiKeyEnv": "sk-proj-secret"}}}`,
			errs:    []string{`.rally/settings.json: providers.openai.apiKeyEnv: must be an environment variable name (the value is not shown: it may be a key)`},
		},
		{
			name:    "array entries",
			project: `{"hooks": [{"on": ["agent_end", "agent_ended"], "command": []}, {"command": ["x"]}]}`,
			errs: []string{
				`.rally/settings.json: hooks[0].command: must have at least 1 item, got 0`,
				`.rally/settings.json: hooks[0].on[1]: must be one of ` + quotedKinds() + `, got "agent_ended"`,
				`.rally/settings.json: hooks[1].on: is required`,
			},
		},
		{
			name:    "a Redis password is refused and not echoed",
			project: `{"fleet": {"redis": "redis://rally:hunter2@127.0.0.1:6379/0"}}`,
			errs:    []string{`.rally/settings.json: fleet.redis: must not hold the Redis password (the value is not shown): remove it from the URL and name its variable in fleet.passwordEnv`},
		},
		{
			name:    "a Redis URL with a user and no password is fine",
			project: `{"fleet": {"redis": "rediss://rally@redis.internal:6380/0", "passwordEnv": "RALLY_REDIS_PASSWORD"}}`,
		},
		{
			name:    "bad URL",
			project: `{"providers": {"local": {"baseUrl": "localhost:8080"}}}`,
			errs:    []string{`.rally/settings.json: providers.local.baseUrl: must be an http or https URL, got "localhost:8080"`},
		},
		{
			name:    "not an object",
			project: `["retry"]`,
			errs:    []string{`.rally/settings.json: must be a JSON object, got an array`},
		},
		{
			name:    "malformed JSON has line and column",
			project: "{\n  \"retry\": {\n    \"maxRetries\": 3,\n  }\n}",
			errs:    []string{`.rally/settings.json:4:3: invalid character '}' looking for beginning of object key string`},
		},
		{
			name:    "truncated JSON",
			project: "{\"retry\": {",
			errs:    []string{`.rally/settings.json:1:11: unexpected end of JSON input`},
		},
		{
			name:    "unknown keys warn and load",
			project: `{"retry": {"maxRetires": 5}, "theme": "dark", "providers": {"openai": {"organization": "x"}}}`,
			warns: []string{
				`.rally/settings.json: providers.openai.organization: unknown key, ignored`,
				`.rally/settings.json: retry.maxRetires: unknown key, ignored (did you mean "maxRetries"?)`,
				`.rally/settings.json: theme: unknown key, ignored`,
			},
		},
		{
			name:    "duplicate key warns",
			project: `{"retry": {"maxRetries": 1, "maxRetries": 2}}`,
			warns:   []string{`.rally/settings.json: retry.maxRetries: key given more than once; the last one is used`},
		},
		{
			name:    "custom provider needs api and baseUrl",
			project: `{"providers": {"a": {"baseUrl": "http://h"}, "b": {"api": "openai-responses"}}}`,
			errs: []string{
				`.rally/settings.json: providers.a.api: is required for a provider that is not built in: must be one of ` + quotedAPIs(),
				`.rally/settings.json: providers.b.baseUrl: is required for a provider that is not built in`,
			},
		},
		{
			name:    "unknown default provider",
			project: `{"defaultProvider": "opneai"}`,
			errs:    []string{`.rally/settings.json: defaultProvider: must name a provider (anthropic, google, groq, local, openai, openrouter, sim), got "opneai"`},
		},
		{
			name:    "fallback to an unknown provider",
			project: `{"retry": {"fallbackModels": ["nobody/m"]}}`,
			errs:    []string{`.rally/settings.json: retry.fallbackModels[0]: names unknown provider "nobody" (known: anthropic, google, groq, local, openai, openrouter, sim)`},
		},
		{
			name:    "base delay above max delay",
			project: `{"retry": {"baseDelayMs": 90000}}`,
			errs:    []string{`.rally/settings.json: retry.maxDelayMs: must be at least retry.baseDelayMs (90000), got 60000`},
		},
		{
			name:    "provider name with a dot",
			project: `{"providers": {"my.host": {"api": "sim"}}}`,
			errs:    []string{`.rally/settings.json: providers: key "my.host": must be a name of letters, digits, - and _`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, warns, err := Load(layout(t, "", tt.project))
			var got []string
			for _, e := range Errors(err) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.errs, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerr: %v", diff, err)
			}
			var gotW []string
			for _, w := range warns {
				gotW = append(gotW, w.String())
			}
			if diff := cmp.Diff(tt.warns, gotW); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if len(tt.errs) > 0 {
				if !errors.Is(err, ErrInvalid) || s != nil {
					t.Errorf("Load = %v, %v; want nil settings and an ErrInvalid error", s, err)
				}
				var e *Error
				if !errors.As(err, &e) || e.File != ".rally/settings.json" {
					t.Errorf("errors.As(*Error) = %+v", e)
				}
			} else if err != nil || s == nil {
				t.Errorf("Load = %v, %v; want settings", s, err)
			}
		})
	}
}

// An error from the merged result names the file that set the key, not
// merely the last file read.
func TestMergedErrorNamesTheFile(t *testing.T) {
	_, _, err := Load(layout(t, `{"retry": {"baseDelayMs": 90000}}`, `{"agent": {"maxTurns": 3}}`))
	if err == nil || !strings.HasPrefix(err.Error(), "~/.rally/settings.json: retry.maxDelayMs:") {
		t.Fatalf("err = %v, want it to name the global file", err)
	}
	// Both files wrong: each error names its own file.
	_, _, err = Load(layout(t, `{"retry": {"maxRetries": -1}}`, `{"retry": {"jitter": "x"}}`))
	want := "~/.rally/settings.json: retry.maxRetries: must be an integer from 0 to 100, got -1\n" +
		`.rally/settings.json: retry.jitter: must be a number from 0 to 1, got "x"`
	if err == nil || err.Error() != want {
		t.Fatalf("err =\n%v\nwant\n%s", err, want)
	}
	if n := len(Errors(fmt.Errorf("start: %w", err))); n != 2 {
		t.Errorf("Errors through a wrapper found %d, want 2", n)
	}
}

// quotedKinds is the session's event kinds as the enum message lists them.
func quotedKinds() string { return quoted(session.EventTypes()) }

// quotedAPIs is the registry's wire formats as the enum message lists
// them, so that a new wire format needs no change here.
func quotedAPIs() string { return quoted(apis.Names()) }

func quoted[S ~string](names []S) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(string(n))
	}
	return strings.Join(q, ", ")
}
