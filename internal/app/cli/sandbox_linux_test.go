package cli

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/sandbox"
	"github.com/rally-agent/rally/llmtest"
)

// needLandlock skips where the kernel has no Landlock, except in CI on a
// kernel that lists it among its security modules: there the sandbox
// must work, and its absence is a failure.
func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Check(); err != nil {
		if sandbox.Required() {
			t.Fatalf("the kernel has landlock, but: %v", err)
		}
		t.Skip(err)
	}
}

// TestSandboxHidesCredentials: a model's bash commands try every way
// around the command-line check to read auth.json ($(printf …), base64, a
// symlink, a hard link, a copy, /proc/self/root, a file descriptor, a
// child process, a new session). rally, a real
// process with tools.sandbox at its default, runs each under Landlock:
// every one gets "Permission denied" (the hard link "Invalid cross-device
// link"), and no form of the key reaches the model. Before, the first two printed the file ([redacted], and the key
// in base64).
func TestSandboxHidesCredentials(t *testing.T) {
	needLandlock(t)
	home := isolate(t)
	const key = "sk-proj-SANDBOXTESTKEY0123456789abcdef"
	auth := `{"providers":{"openai":[{"id":"work","key":"` + key + `"}]}}`
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	// The path, never spelled out on the command line.
	path := `"$(printf '%s/%s%s' '` + home + `' au th.json)"`
	tricks := map[string]string{
		"printf":          `cat ` + path,
		"base64":          `base64 ` + path,
		"symlink":         `ln -s ` + path + ` l && cat l`,
		"hard link":       `ln ` + path + ` h && cat h`,
		"copy":            `cp ` + path + ` c && cat c`,
		"proc self root":  `cat /proc/self/root` + path,
		"child process":   `sh -c 'cat ` + strings.ReplaceAll(path, `'`, `'\''`) + `'`,
		"new session":     `setsid sh -c 'cat ` + strings.ReplaceAll(path, `'`, `'\''`) + `'`,
		"open fd and dup": `exec 3<` + path + ` && cat <&3`,
	}
	var calls []llmtest.ToolCall
	var names []string
	for name, cmd := range tricks {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		calls = append(calls, llmtest.ToolCall{ID: "call_" + strings.ReplaceAll(name, " ", "_"), Name: "bash", Arguments: string(args)})
		names = append(names, name)
	}
	srv := llmtest.NewServer(t, llmtest.Step{ToolCalls: calls}, llmtest.Step{Text: "done"})
	out, errOut, code := runMain(t, "--no-session", "--mode", "json", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "read the key")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	results := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type       string `json:"type"`
			ToolCallID string `json:"toolCallId"`
			Result     struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "tool_execution_end" {
			for _, c := range e.Result.Content {
				results[e.ToolCallID] += c.Text
			}
		}
	}
	leaks := []string{key, base64.StdEncoding.EncodeToString([]byte(auth))[:24], "[redacted]"}
	for _, name := range names {
		got, ok := results["call_"+strings.ReplaceAll(name, " ", "_")]
		if !ok {
			t.Errorf("%s: no result", name)
			continue
		}
		// Landlock refuses a hard link across its rules with EXDEV.
		if !strings.Contains(got, "Permission denied") && !(name == "hard link" && strings.Contains(got, "Invalid cross-device link")) {
			t.Errorf("%s: %q, want Permission denied", name, got)
		}
		for _, l := range leaks {
			if strings.Contains(got, l) {
				t.Errorf("%s: the output holds %q: %q", name, l, got)
			}
		}
	}
}
