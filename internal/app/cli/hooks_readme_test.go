//go:build unix

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/mdfence"
)

// readmeSection returns the README's "## title" section.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", title)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+4]
	}
	return s
}

// normalize blanks what differs from run to run: durations, session ids,
// times.
func normalize(s string) string {
	s = regexp.MustCompile(`(?m): exit (\d+) in \d+ms$`).ReplaceAllString(s, ": exit $1 in Nms")
	s = regexp.MustCompile(`(?m)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12},\d{13},\d+$`).ReplaceAllString(s, "ID,T,D")
	return s
}

// TestREADMEHooks runs the README's Hooks section as printed: the example
// scripts it shows are the files in examples/hooks, every settings block
// is valid, and each command's shown output is what it prints. A stand-in
// notify-send on PATH records the notifications (the desktop is not under
// test).
func TestREADMEHooks(t *testing.T) {
	sec := readmeSection(t, "Hooks")
	scripts := map[string][]byte{}
	for _, name := range []string{"notify-failed-retry.sh", "prompt-times.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "hooks", name))
		if err != nil {
			t.Fatal(err)
		}
		scripts[name] = b
	}
	isolate(t)
	for name, b := range scripts {
		found := false
		for _, block := range mdfence.Texts(sec, "sh") {
			found = found || block == string(b)
		}
		if !found {
			t.Errorf("the README does not show examples/hooks/%s as it is", name)
		}
		os.MkdirAll("examples/hooks", 0o755)
		os.WriteFile(filepath.Join("examples", "hooks", name), b, 0o755)
	}
	bin := t.TempDir()
	notified := filepath.Join(bin, "notified")
	os.WriteFile(filepath.Join(bin, "notify-send"), []byte("#!/bin/sh\nprintf '%s|' \"$@\" >> "+notified+"\necho >> "+notified+"\n"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))

	settingsBlocks := mdfence.Texts(sec, "json")
	if len(settingsBlocks) != 2 {
		t.Fatalf("%d json blocks in the Hooks section, want 2", len(settingsBlocks))
	}
	os.MkdirAll(".rally", 0o755)
	for _, block := range settingsBlocks {
		os.WriteFile(".rally/settings.json", []byte(block), 0o644)
		if _, errOut, code := run(t, "", "settings", "validate"); code != 0 {
			t.Errorf("settings block is invalid: %s\n%s", errOut, block)
		}
	}

	var demo string
	for _, block := range mdfence.Texts(sec, "sh") {
		if strings.HasPrefix(block, "go run ./cmd/rally ") {
			demo = block
		}
	}
	if demo == "" {
		t.Fatal("no demo block")
	}
	// Commands, each followed by its output as "# " lines.
	type step struct {
		cmd  string
		want []string
	}
	var steps []step
	for line := range strings.Lines(strings.TrimSuffix(demo, "\n")) {
		line = strings.TrimSuffix(line, "\n")
		if out, ok := strings.CutPrefix(line, "# "); ok {
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, out)
		} else {
			steps = append(steps, step{cmd: line})
		}
	}
	for _, st := range steps {
		var got string
		if file, ok := strings.CutPrefix(st.cmd, "cat "); ok {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		} else {
			args, ok := strings.CutPrefix(st.cmd, "go run ./cmd/rally ")
			if !ok {
				t.Fatalf("unknown command %q", st.cmd)
			}
			argv, err := shellSplit(args)
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, _ := run(t, "", argv...)
			got = out + errOut
		}
		if len(st.want) == 0 {
			continue
		}
		want := strings.Join(st.want, "\n") + "\n"
		if normalize(got) != normalize(want) {
			t.Errorf("%s printed\n%s\nthe README shows\n%s", st.cmd, got, want)
		}
	}

	// The notifications, as the prose after the demo describes them.
	b, _ := os.ReadFile(notified)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 ||
		lines[0] != "--urgency=critical|rally gave up retrying|529 overloaded_error: Overloaded (retries: 3)|" ||
		!strings.HasPrefix(lines[1], "--urgency=critical|rally gave up retrying|fake-llm: 503 service unavailable") ||
		!strings.HasSuffix(lines[1], "(retries: 1)|") {
		t.Errorf("notifications:\n%s", b)
	}
	if !strings.Contains(sec, "*rally gave up retrying*") || !strings.Contains(sec, "`(retries: 3)`") || !strings.Contains(sec, "`(retries: 1)`") {
		t.Error("the README describes other notifications")
	}
	// Both prompts waited for a 100 ms retry.
	csv, _ := os.ReadFile("prompts.csv")
	for _, row := range strings.Split(strings.TrimSpace(string(csv)), "\n")[1:] {
		f := strings.Split(row, ",")
		if d, _ := strconv.Atoi(f[len(f)-1]); d < 100 {
			t.Errorf("row %q: a prompt with a 100ms retry wait took %d ms", row, d)
		}
	}
}

// TestREADMEHooksWithoutNotifySend checks what the README says happens
// without notify-send: the hook fails with exit status 127, rally hooks
// test says so and exits 1, and a real run names the hook once on stderr.
func TestREADMEHooksWithoutNotifySend(t *testing.T) {
	sec := readmeSection(t, "Hooks")
	for _, claim := range []string{"`libnotify-bin`", "exit status 127", "exits 1", "names the failing hook once on stderr"} {
		if !strings.Contains(strings.Join(strings.Fields(sec), " "), claim) {
			t.Errorf("the README does not say %q", claim)
		}
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "hooks", "notify-failed-retry.sh"))
	if err != nil {
		t.Fatal(err)
	}
	isolate(t)
	os.MkdirAll("examples/hooks", 0o755)
	os.WriteFile("examples/hooks/notify-failed-retry.sh", script, 0o755)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry": {"maxRetries": 1, "baseDelayMs": 100},
  "hooks": [{"on": ["auto_retry_end"], "command": ["examples/hooks/notify-failed-retry.sh"]}]}`), 0o644)
	// A PATH with what the script needs but notify-send.
	bin := t.TempDir()
	for _, tool := range []string{"sh", "cat", "sed"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)

	out, errOut, code := run(t, "", "hooks", "test", "auto_retry_end")
	if code != 1 || !strings.Contains(out, "failed: exit status 127") || !strings.Contains(out, "notify-send: not found") {
		t.Errorf("hooks test: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = run(t, "", "--no-session", "--preset", "overloaded", "-p", "What does rally do?")
	hook := "rally: hook hooks[0] (examples/hooks/notify-failed-retry.sh) on auto_retry_end: exit status 127\n"
	if code != 1 || strings.Count(errOut, hook) != 1 || !strings.Contains(errOut, "rally: retry failed after 2 calls (1 retry): fake-llm: 503") {
		t.Errorf("the run: exit %d, stderr\n%s", code, errOut)
	}
}
