package web

import (
	"net/http"
	"strings"
	"testing"
)

// Keys on the settings page (issue 24 defect 6): a known key of no
// well-known shape, repeated where a setting holds free text, is hidden
// as the session pages hide it; URLs with a password and unknown keys in
// values typed as JSON are refused.

const knownKey = "zzKNOWNRALLYKEY0000777" // no well-known prefix: only Config.Keys finds it

func TestSettingsPageHidesKnownKeys(t *testing.T) {
	e := newEnvKeys(t, []string{knownKey})
	global := e.src.Global.Path
	file := `{
  "providers": {"acme": {"api": "openai-completions", "baseUrl": "https://acme.example/v1?key=` + knownKey + `"}},
  "hooks": [{"on": ["agent_end"], "command": ["notify", "--token", "` + knownKey + `"]}]
}
`
	writeFile(t, global, file)
	code, page := e.get(t, "/settings")
	if code != http.StatusOK {
		t.Fatalf("GET /settings: %d", code)
	}
	for _, part := range []string{knownKey, knownKey[:12], knownKey[len(knownKey)-8:]} {
		if strings.Contains(page, part) {
			t.Fatalf("the settings page shows %q of a known key", part)
		}
	}
	if n := strings.Count(page, "looks like an API key"); n < 2 {
		t.Errorf("%d notes about hidden values, want one for the baseUrl and one for the hooks", n)
	}
	// Saving something else keeps the hidden values as they are.
	form := e.load(t, "global")
	form.Set("retry.maxRetries", "4")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	if got := readFile(t, global); strings.Count(got, knownKey) != 2 || !strings.Contains(got, `"maxRetries": 4`) {
		t.Fatalf("the save lost or changed the hidden values:\n%s", got)
	}
	// A known key typed into a field is refused, not stored.
	form = e.load(t, "global")
	form.Set("defaultModel", "acme/"+knownKey)
	code, body := e.post(t, form, nil)
	if code != http.StatusUnprocessableEntity || strings.Contains(body, knownKey) {
		t.Fatalf("a known key typed in: %d (want 422, the key not shown)", code)
	}
}

func TestSettingsURLWithPasswordRefused(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	for _, tc := range []struct{ field, value string }{
		{"providers.openai.baseUrl", "https://me:hunter2hunter2@api.example/v1"},
		{"providers.openai.baseUrl", "https://hunter2hunter2@api.example/v1"},
		{"fleet.redis", "redis://rally:hunter2hunter2@127.0.0.1:6379/0"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			form := e.load(t, "global")
			form.Set(tc.field, tc.value)
			code, body := e.post(t, form, nil)
			if code != http.StatusUnprocessableEntity || !strings.Contains(body, "(the value is not shown)") {
				t.Fatalf("%s = %s: %d, want 422 refusing it", tc.field, tc.value, code)
			}
			if strings.Contains(body, "hunter2") {
				t.Error("the page repeats the password")
			}
			if got := readFile(t, global); got != "" {
				t.Fatalf("written:\n%s", got)
			}
		})
	}
}

func TestUnknownKeyInJSONValueRefused(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	form := e.load(t, "global")
	form.Set("providers.openai.models", `[{"id": "gpt-x", "contextWindw": 1000}]`)
	code, body := e.post(t, form, nil)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "providers.openai.models[0].contextWindw: unknown key") {
		t.Fatalf("unknown key in models: %d, want 422 naming it", code)
	}
	if got := readFile(t, global); got != "" {
		t.Fatalf("written:\n%s", got)
	}
	form = e.load(t, "global")
	form.Set("providers.openai.models", `[{"id": "gpt-x", "contextWindow": 1000}]`)
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("known keys only: %d\n%s", code, body)
	}
}
