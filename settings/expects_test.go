package settings

import (
	"strings"
	"testing"
)

func TestExpects(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"retry.maxRetries", "an integer from 0 to 100"},
		{"retry.jitter", "a number from 0 to 1"},
		{"retry.streaming", `one of "restart", "beforeOutput", "resume"`},
		{"retry.enabled", "true or false"},
		{"retry.fallbackModels", "an array of strings"},
		{"retry.fallbackModels[0]", `a "provider/model" string`},
		{"providers.anyname.apiKeyEnv", "an environment variable name"},
		{"providers.openai.timeoutMs", "an integer from 1 to 3600000"},
		{"providers.openai.models[0].contextWindow", "an integer of at least 1"},
		{"defaultModel", "a string"},
		{"retry", "an object"},
		{"retry.nope", ""},
		{"", ""},
		{"retry..x", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := Expects(tc.key); got != tc.want {
				t.Errorf("Expects(%q) = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

// The words are those of the validation message for the same key.
func TestExpectsAgreesWithValidation(t *testing.T) {
	for _, key := range []string{"retry.maxRetries", "retry.streaming", "providers.groq.idleTimeoutMs", "compaction.thresholdPercent"} {
		f, err := ParseFile(Source{Name: "s.json"}, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetJSON(key, []byte(`"bad"`)); err != nil {
			t.Fatal(err)
		}
		_, err = f.Check()
		if es := Errors(err); len(es) != 1 || !strings.HasPrefix(es[0].Msg, "must be "+Expects(key)+", got") {
			t.Errorf("%s: %v vs %q", key, err, Expects(key))
		}
	}
}
