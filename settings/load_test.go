package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layout writes the given global and project files ("" leaves a file out)
// under fresh directories and returns where Load should look.
func layout(t *testing.T, global, project string) Sources {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	src := Locate(home, cwd, func(string) string { return "" })
	write := func(path, data string) {
		if data == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(src.Global.Path, global)
	write(src.Project.Path, project)
	return src
}

func TestLocate(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name      string
		home, cwd string
		env       map[string]string
		want      Sources
	}{
		{
			name: "defaults", home: "/home/u", cwd: "/work/p",
			want: Sources{
				Global:  Source{Path: "/home/u/.rally/settings.json", Name: "~/.rally/settings.json"},
				Project: Source{Path: "/work/p/.rally/settings.json", Name: ".rally/settings.json"},
			},
		},
		{
			name: "RALLY_HOME", home: "/home/u", cwd: "/work/p", env: map[string]string{"RALLY_HOME": "/etc/rally"},
			want: Sources{
				Global:  Source{Path: "/etc/rally/settings.json", Name: "/etc/rally/settings.json"},
				Project: Source{Path: "/work/p/.rally/settings.json", Name: ".rally/settings.json"},
			},
		},
		{
			name: "run in the home directory is one layer", home: "/home/u", cwd: "/home/u",
			want: Sources{Global: Source{Path: "/home/u/.rally/settings.json", Name: "~/.rally/settings.json"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Locate(tt.home, tt.cwd, env(tt.env))); diff != "" {
				t.Errorf("Locate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadNoFilesIsDefaults(t *testing.T) {
	s, warns, err := Load(layout(t, "", ""))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Load: %v, warnings %v", err, warns)
	}
	if diff := cmp.Diff(Default(), s); diff != "" {
		t.Errorf("settings with no files differ from Default (-want +got):\n%s", diff)
	}
	if _, ok := s.Providers[Sim]; !ok {
		t.Error("sim provider missing")
	}
}

func TestLoadLayers(t *testing.T) {
	global := `{
  "defaultProvider": "anthropic",
  "retry": {"maxRetries": 5, "baseDelayMs": 1000, "fallbackModels": ["openai/gpt-4.1", "groq/llama"]},
  "providers": {"openai": {"maxRetries": 1}, "mine": {"api": "openai-completions", "baseUrl": "http://10.0.0.1:9000/v1"}}
}`
	project := `{
  "retry": {"maxRetries": 7, "fallbackModels": ["openrouter/anthropic/claude-sonnet-4"]},
  "providers": {"openai": {"timeoutMs": 5000}},
  "compaction": {"enabled": false}
}`
	s, warns, err := Load(layout(t, global, project))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Load: %v, warnings %v", err, warns)
	}
	want := Default()
	want.DefaultProvider = "anthropic"
	want.Retry.MaxRetries = 7                                                    // project wins
	want.Retry.BaseDelayMs = 1000                                                // global kept: merged key by key
	want.Retry.FallbackModels = []string{"openrouter/anthropic/claude-sonnet-4"} // arrays replace
	want.Compaction.Enabled = false
	one := 1
	openai := want.Providers["openai"]
	openai.MaxRetries = &one          // from global
	openai.TimeoutMs = 5000           // from project
	want.Providers["openai"] = openai // baseUrl etc. from the built-in
	want.Providers["mine"] = Provider{API: APIOpenAICompletions, BaseURL: "http://10.0.0.1:9000/v1",
		TimeoutMs: DefaultTimeoutMs, IdleTimeoutMs: DefaultIdleTimeoutMs, MaxEventBytes: DefaultMaxEventBytes, MaxMessageBytes: DefaultMaxMessageBytes}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("merged settings (-want +got):\n%s", diff)
	}
}

// An old file written before most settings existed keeps working: every
// key it lacks takes its default.
func TestLoadPartialOldFile(t *testing.T) {
	s, warns, err := Load(layout(t, `{"retry": {"enabled": false}}`, ""))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Load: %v, warnings %v", err, warns)
	}
	want := Default()
	want.Retry.Enabled = false
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadEmptyFileIsEmptyObject(t *testing.T) {
	src := layout(t, "", "")
	if err := os.MkdirAll(filepath.Dir(src.Global.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src.Global.Path, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(src); err != nil {
		t.Fatalf("Load of an empty file: %v", err)
	}
}

func TestLoadUnreadableFile(t *testing.T) {
	src := layout(t, "", "")
	// A directory where the file should be cannot be read.
	if err := os.MkdirAll(src.Global.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(src)
	if err == nil || errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "read settings:") {
		t.Fatalf("Load = %v, want a read error that is not ErrInvalid", err)
	}
}

func TestGet(t *testing.T) {
	s, _, err := Load(layout(t, `{"providers": {"openai": {"maxRetries": 2}}}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ key, want, err string }{
		{key: "retry.maxRetries", want: "3"},
		{key: "retry.streaming", want: `"restart"`},
		{key: "retry.fallbackModels", want: "[]"},
		{key: "providers.openai.baseUrl", want: `"https://api.openai.com/v1"`},
		{key: "providers.openai.maxRetries", want: "2"},
		{key: "providers.anthropic.maxRetries", want: "null"},
		{key: "agent", want: "{\n  \"maxTurns\": 50\n}"},
		{key: "retry.maxRetires", err: `get settings: unknown key "retry.maxRetires" (did you mean "retry.maxRetries"?)`},
		{key: "nope.x", err: `get settings: unknown key "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := s.Get(tt.key)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Get error = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("Get = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}
