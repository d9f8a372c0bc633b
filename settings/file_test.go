package settings

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readSource(t *testing.T, src Source) *File {
	t.Helper()
	f, err := ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSaveKeepsUnknownKeysAndOrder(t *testing.T) {
	before := `{
    "zeta": {"keep": [1, 2.50, "x"]},
    "retry": {
        "streaming": "beforeOutput",
        "maxRetries": 3,
        "futureKnob": true
    },
    "$schema": "./schema.json",
    "html": "<a & b>"
}
`
	src := layout(t, before, "").Global
	f := readSource(t, src)
	if err := f.Set("retry.maxRetries", 9); err != nil {
		t.Fatal(err)
	}
	if err := f.SetJSON("providers.openai.maxRetries", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	// The user's order, unknown keys, number spelling and four-space
	// indentation survive; new keys go at the end of their object.
	want := `{
    "zeta": {
        "keep": [
            1,
            2.50,
            "x"
        ]
    },
    "retry": {
        "streaming": "beforeOutput",
        "maxRetries": 9,
        "futureKnob": true
    },
    "$schema": "./schema.json",
    "html": "<a & b>",
    "providers": {
        "openai": {
            "maxRetries": 1
        }
    }
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("saved file (-want +got):\n%s", diff)
	}
}

func TestSavePermissions(t *testing.T) {
	tests := []struct {
		name string
		old  fs.FileMode // 0: no file yet
		want fs.FileMode
	}{
		{name: "new file", want: 0o644},
		{name: "private file stays private", old: 0o600, want: 0o600},
		{name: "group-writable stays so", old: 0o664, want: 0o664},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := layout(t, "", "").Project
			if tt.old != 0 {
				if err := os.MkdirAll(filepath.Dir(src.Path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(src.Path, []byte("{}"), tt.old); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(src.Path, tt.old); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			f := readSource(t, src)
			if err := f.Set("agent.maxTurns", 10); err != nil {
				t.Fatal(err)
			}
			if err := f.Save(context.Background()); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(src.Path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.want {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(src.Path))
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only settings.json (no temp files)", len(entries))
			}
		})
	}
}

func TestSaveThroughSymlink(t *testing.T) {
	src := layout(t, "", "").Global
	real := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	if err := os.WriteFile(real, []byte(`{"retry": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(src.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, src.Path); err != nil {
		t.Fatal(err)
	}
	f := readSource(t, src)
	if err := f.Set("retry.jitter", 0.25); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(src.Path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a symlink: %v", err)
	}
	data, _ := os.ReadFile(real)
	if !strings.Contains(string(data), `"jitter": 0.25`) {
		t.Errorf("target not updated: %s", data)
	}
}

func TestSaveRefuses(t *testing.T) {
	t.Run("invalid value", func(t *testing.T) {
		src := layout(t, `{"retry": {"maxRetries": 1}}`, "").Global
		f := readSource(t, src)
		if err := f.SetJSON("retry.maxRetries", []byte(`"three"`)); err != nil {
			t.Fatal(err)
		}
		err := f.Save(context.Background())
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("Save = %v, want ErrInvalid", err)
		}
		assertFile(t, src.Path, `{"retry": {"maxRetries": 1}}`)
	})
	t.Run("changed on disk", func(t *testing.T) {
		src := layout(t, `{}`, "").Global
		f := readSource(t, src)
		if err := os.WriteFile(src.Path, []byte(`{"agent": {}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.Set("agent.maxTurns", 5); err != nil {
			t.Fatal(err)
		}
		if err := f.Save(context.Background()); err == nil || !strings.Contains(err.Error(), "changed on disk") {
			t.Fatalf("Save = %v, want a changed-on-disk error", err)
		}
		assertFile(t, src.Path, `{"agent": {}}`)
	})
	t.Run("malformed file is not read", func(t *testing.T) {
		src := layout(t, `{"agent": `, "").Global
		if _, err := ReadFile(src); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ReadFile = %v, want ErrInvalid", err)
		}
	})
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s = %q, want it untouched: %q", path, got, want)
	}
}

func TestSetAndDelete(t *testing.T) {
	tests := []struct {
		name, file, key, value string
		del                    bool
		want, err              string
	}{
		{name: "creates groups", file: `{}`, key: "compaction.enabled", value: "false",
			want: "{\n  \"compaction\": {\n    \"enabled\": false\n  }\n}\n"},
		{name: "missing file", file: "", key: "defaultProvider", value: `"groq"`,
			want: "{\n  \"defaultProvider\": \"groq\"\n}\n"},
		{name: "inside an array", file: `{"hooks": [{"on": ["agent_end"], "command": ["x"]}]}`, key: "hooks[0].timeoutMs", value: "100",
			want: "{\n  \"hooks\": [\n    {\n      \"on\": [\n        \"agent_end\"\n      ],\n      \"command\": [\n        \"x\"\n      ],\n      \"timeoutMs\": 100\n    }\n  ]\n}\n"},
		{name: "object replaces", file: `{"providers": {"x": {"api": "sim", "maxRetries": 1}}}`, key: "providers.x", value: `{"api": "sim"}`,
			want: "{\n  \"providers\": {\n    \"x\": {\n      \"api\": \"sim\"\n    }\n  }\n}\n"},
		{name: "delete", file: `{"retry": {"maxRetries": 1, "jitter": 0.5}}`, key: "retry.maxRetries", del: true,
			want: "{\n  \"retry\": {\n    \"jitter\": 0.5\n  }\n}\n"},
		{name: "delete missing", file: "", key: "retry.maxRetries", del: true, want: "{}\n"},
		{name: "delete the last key", file: `{"retry": {"maxRetries": 1}, "defaultProvider": "sim"}`, key: "retry.maxRetries", del: true,
			want: "{\n  \"defaultProvider\": \"sim\"\n}\n"},
		{name: "delete empties two levels", file: `{"providers": {"openai": {"maxRetries": 1}}}`, key: "providers.openai.maxRetries", del: true,
			want: "{}\n"},
		{name: "delete keeps a sibling", file: `{"providers": {"openai": {"maxRetries": 1}, "groq": {}}}`, key: "providers.openai.maxRetries", del: true,
			want: "{\n  \"providers\": {\n    \"groq\": {}\n  }\n}\n"},
		{name: "delete missing keeps an empty object", file: `{"retry": {}}`, key: "retry.maxRetries", del: true,
			want: "{\n  \"retry\": {}\n}\n"},
		{name: "delete inside an array element", file: `{"hooks": [{"timeoutMs": 100}]}`, key: "hooks[0].timeoutMs", del: true,
			want: "{\n  \"hooks\": [\n    {}\n  ]\n}\n"},
		{name: "unknown key", file: `{}`, key: "retry.maxRetires", value: "1",
			err: `set settings: unknown key "retry.maxRetires" (did you mean "retry.maxRetries"?)`},
		{name: "element not in the file", file: `{}`, key: "hooks[0].timeoutMs", value: "1",
			err: `set hooks[0].timeoutMs: hooks has no elements in ~/.rally/settings.json`},
		{name: "index past the end", file: `{"retry": {"fallbackModels": ["a/b"]}}`, key: "retry.fallbackModels[3]", value: `"c/d"`,
			err: `set retry.fallbackModels[3]: retry.fallbackModels has 1 element in ~/.rally/settings.json`},
		{name: "bad key syntax", file: `{}`, key: "hooks[x]", value: "1",
			err: `set settings: parse key "hooks[x]": "x" is not an array index`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := readSource(t, layout(t, tt.file, "").Global)
			var err error
			if tt.del {
				err = f.Delete(tt.key)
			} else {
				err = f.SetJSON(tt.key, []byte(tt.value))
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(f.Bytes())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
