package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestSandboxPathsHome (issue 24): "~/" in tools.sandboxPaths is the home
// directory. A real sandboxed bash command writes in the directory named
// so, and still cannot write beside it; a path that is neither absolute
// nor ~/… is refused when the settings load, naming the setting, before
// anything runs; one that does not exist is said on stderr.
func TestSandboxPathsHome(t *testing.T) {
	needLandlock(t)
	tests := []struct {
		name, path string
		code       int
		stderr     string
	}{
		{"~/ is the home directory", "~/.cache/allowed", 0, ""},
		{"a relative path is refused", ".cache/allowed", 2, `tools.sandboxPaths[0]: must be an absolute path, or one under ~/ (the home directory), got ".cache/allowed"`},
		{"a missing directory is said", "~/.cache/missing", 0, ".cache/missing: no such file or directory; commands cannot write there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			// The temporary directory is writable, so neither the home
			// nor the directory beside the allowed one may be in it.
			root := t.TempDir()
			home, tmp := filepath.Join(root, "home"), filepath.Join(root, "tmp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			t.Setenv("TMPDIR", tmp)
			if err := os.MkdirAll(filepath.Join(home, ".cache", "allowed"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(".rally", 0o755); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(map[string]any{"tools": map[string]any{"sandboxPaths": []string{tt.path}}})
			if err := os.WriteFile(".rally/settings.json", b, 0o644); err != nil {
				t.Fatal(err)
			}
			allowed, beside := filepath.Join(home, ".cache", "allowed", "out"), filepath.Join(home, ".cache", "beside")
			args, _ := json.Marshal(map[string]string{"command": "echo in > " + allowed + "; echo out > " + beside})
			srv := llmtest.NewServer(t, llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "bash", Arguments: string(args)}}}, llmtest.Step{Text: "done"})
			_, errOut, code := runMain(t, "--no-session", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "write")
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tt.code, tt.stderr)
			}
			_, errIn := os.Stat(allowed)
			if _, err := os.Stat(beside); err == nil {
				t.Errorf("the command wrote %s, outside every allowed path: no sandbox", beside)
			}
			switch {
			case tt.code != 0 && len(srv.Requests()) > 0:
				t.Errorf("%d requests reached the model with a refused setting", len(srv.Requests()))
			case tt.path == "~/.cache/allowed" && errIn != nil:
				t.Errorf("the command could not write in %s, which ~/.cache/allowed names: %v", filepath.Dir(allowed), errIn)
			}
		})
	}
}
