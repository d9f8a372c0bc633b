package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/settings"
)

// settingsEnv gives a test its own RALLY_HOME and working directory and
// returns the global and project file paths.
func settingsEnv(t *testing.T) (global, project string) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	t.Setenv("RALLY_HOME", home)
	t.Setenv("RALLY_API_KEY", "")
	t.Chdir(cwd)
	return filepath.Join(home, "settings.json"), filepath.Join(cwd, ".rally", "settings.json")
}

func rally(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A user's file, formatted their way, with a key rally does not know.
const userFile = `{
	"retry": {"maxRetries": 4,   "streaming": "beforeOutput"},
	"editorTheme": "dark"
}`

func TestSettingsSetRefusesInvalid(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		args   []string
		stderr string
	}{
		{name: "wrong type", file: userFile, args: []string{"retry.maxRetries", "three"},
			stderr: `retry.maxRetries: must be an integer from 0 to 100, got "three"`},
		{name: "out of range", file: userFile, args: []string{"retry.maxRetries", "101"},
			stderr: `retry.maxRetries: must be an integer from 0 to 100, got 101`},
		{name: "unknown enum value", file: userFile, args: []string{"retry.streaming", "sometimes"},
			stderr: `retry.streaming: must be one of "restart", "beforeOutput", "resume", got "sometimes"`},
		{name: "unknown key", file: userFile, args: []string{"retry.maxRetires", "5"},
			stderr: `unknown key "retry.maxRetires" (did you mean "retry.maxRetries"?)`},
		{name: "cross-file rule", file: userFile, args: []string{"defaultProvider", "nobody"},
			stderr: `defaultProvider: must name a provider`},
		{name: "malformed file is never rewritten", file: "{\n  \"retry\": {,\n}", args: []string{"retry.maxRetries", "5"},
			stderr: `settings.json:2:13: invalid character ','`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			global, _ := settingsEnv(t)
			writeFile(t, global, tt.file)
			_, stderr, code := rally(append([]string{"settings", "set"}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.stderr)
			}
			got, err := os.ReadFile(global)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.file {
				t.Errorf("file changed:\n%s\nwant byte-identical:\n%s", got, tt.file)
			}
		})
	}
}

func TestSettingsSetGetAndLayers(t *testing.T) {
	global, project := settingsEnv(t)
	writeFile(t, global, userFile)

	if out, stderr, code := rally("settings", "set", "retry.maxRetries", "6"); code != 0 || !strings.Contains(out, "retry.maxRetries = 6") {
		t.Fatalf("set: exit %d, out %q, stderr %q", code, out, stderr)
	}
	data, _ := os.ReadFile(global)
	want := "{\n\t\"retry\": {\n\t\t\"maxRetries\": 6,\n\t\t\"streaming\": \"beforeOutput\"\n\t},\n\t\"editorTheme\": \"dark\"\n}\n"
	if string(data) != want {
		t.Errorf("global file:\n%s\nwant (unknown key and order kept, tabs kept):\n%s", data, want)
	}

	steps := []struct {
		args []string
		out  string
	}{
		{[]string{"settings", "get", "retry.maxRetries"}, "6\n"},
		{[]string{"settings", "set", "--project", "retry.maxRetries", "1"}, ".rally/settings.json: retry.maxRetries = 1\n"},
		{[]string{"settings", "get", "retry.maxRetries"}, "1\n"},               // project wins
		{[]string{"settings", "get", "retry.streaming"}, "\"beforeOutput\"\n"}, // global still applies
		{[]string{"settings", "get", "retry.baseDelayMs"}, "2000\n"},           // default
		{[]string{"settings", "set", "--project", "defaultModel", "gpt-4.1"}, ".rally/settings.json: defaultModel = \"gpt-4.1\"\n"},
		{[]string{"settings", "get", "providers.openai.baseUrl"}, "\"https://api.openai.com/v1\"\n"},
		{[]string{"settings", "unset", "--project", "retry.maxRetries"}, ".rally/settings.json: retry.maxRetries removed\n"},
		{[]string{"settings", "get", "retry.maxRetries"}, "6\n"},
	}
	for _, st := range steps {
		out, stderr, code := rally(st.args...)
		if code != 0 || out != st.out {
			t.Fatalf("%v: exit %d, out %q, want %q; stderr %q", st.args, code, out, st.out, stderr)
		}
	}
	// Unsetting the last retry key leaves no empty "retry": {} behind.
	if data, err := os.ReadFile(project); err != nil {
		t.Errorf("project file not written: %v", err)
	} else if want := "{\n  \"defaultModel\": \"gpt-4.1\"\n}\n"; string(data) != want {
		t.Errorf("project file after unset:\n%s\nwant:\n%s", data, want)
	}
	// The unknown key is reported on every load, never dropped.
	_, stderr, _ := rally("settings", "get", "agent.maxTurns")
	if !strings.Contains(stderr, "warning: "+global+": editorTheme: unknown key, ignored") {
		t.Errorf("stderr = %q, want a warning naming editorTheme", stderr)
	}
}

func TestSettingsGetUnknownKey(t *testing.T) {
	settingsEnv(t)
	_, stderr, code := rally("settings", "get", "retry.nope")
	if code != 2 || !strings.Contains(stderr, `unknown key "retry.nope"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestSettingsValidate(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		global, _ := settingsEnv(t)
		writeFile(t, global, `{"retry": {"maxRetries": 2}}`)
		out, stderr, code := rally("settings", "validate")
		want := global + ": ok\n.rally/settings.json: not found, defaults apply\n"
		if code != 0 || out != want || stderr != "" {
			t.Errorf("exit %d, out %q (want %q), stderr %q", code, out, want, stderr)
		}
	})
	t.Run("errors in both files and a warning", func(t *testing.T) {
		global, project := settingsEnv(t)
		writeFile(t, global, `{"retry": {"jitter": 2}}`)
		writeFile(t, project, `{"compaction": {"enabeld": false, "thresholdPercent": "high"}}`)
		_, stderr, code := rally("settings", "validate")
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		for _, want := range []string{
			"rally: warning: .rally/settings.json: compaction.enabeld: unknown key, ignored (did you mean \"enabled\"?)\n",
			"rally: " + global + ": retry.jitter: must be a number from 0 to 1, got 2\n",
			"rally: .rally/settings.json: compaction.thresholdPercent: must be an integer from 1 to 100, got \"high\"\n",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
	t.Run("named file", func(t *testing.T) {
		settingsEnv(t)
		writeFile(t, "team.json", `{"agent": {"maxTurns": 0}}`)
		_, stderr, code := rally("settings", "validate", "team.json")
		if code != 2 || !strings.Contains(stderr, "team.json: agent.maxTurns: must be an integer from 1 to 10000, got 0") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestSettingsSchemaAndPath(t *testing.T) {
	global, project := settingsEnv(t)
	out, _, code := rally("settings", "schema")
	if code != 0 || out != string(settings.Schema()) {
		t.Errorf("schema: exit %d, output is not the embedded schema", code)
	}
	out, _, code = rally("settings", "path")
	want := "global:  " + global + "\nproject: " + project + "\n"
	if code != 0 || out != want {
		t.Errorf("path: exit %d, out %q, want %q", code, out, want)
	}
	if out, _, _ := rally("settings", "path", "--project"); out != project+"\n" {
		t.Errorf("path --project = %q", out)
	}
}

func TestSettingsHelpHasExamples(t *testing.T) {
	settingsEnv(t)
	for _, sub := range []string{"", "get", "set", "unset", "validate", "schema", "path"} {
		t.Run("settings "+sub, func(t *testing.T) {
			args := []string{"settings"}
			if sub != "" {
				args = append(args, sub)
			}
			out, _, code := rally(append(args, "--help")...)
			if code != 0 || !strings.Contains(out, "Examples:\n  rally settings") {
				t.Errorf("exit %d, help without an example:\n%s", code, out)
			}
		})
	}
}

func TestLoadSettings(t *testing.T) {
	global, _ := settingsEnv(t)
	writeFile(t, global, `{"retry": {"maxRetries": 5}, "colour": "blue"}`)
	var errb bytes.Buffer
	s := streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb}
	st, err := loadSettings(s)
	if err != nil || st.Retry.MaxRetries != 5 {
		t.Fatalf("loadSettings = %v, %v", st, err)
	}
	if !strings.Contains(errb.String(), "colour: unknown key") {
		t.Errorf("warning not printed: %q", errb.String())
	}

	writeFile(t, global, `{"retry": {"maxRetries": "five"}}`)
	_, err = loadSettings(s)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !errors.Is(err, settings.ErrInvalid) {
		t.Fatalf("loadSettings on an invalid file = %v, want exit status 2 and ErrInvalid", err)
	}
}
