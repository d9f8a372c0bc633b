package cli

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/app/tui"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
	"github.com/spf13/cobra"
)

// TestUIArgs checks which command lines open the UI, with which first
// prompt, and that a bare word never reaches a model (issue 14 item 2).
func TestUIArgs(t *testing.T) {
	t.Setenv("RALLY_HOME", t.TempDir())
	srv := llmtest.NewServer(t, llmtest.Step{Text: "an answer"})
	fake := []string{"--no-session", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}
	cases := []struct {
		name    string
		args    []string
		code    int
		ui      bool   // the UI was opened
		first   string // with this first prompt
		errWant string
		out     string
	}{
		{name: "quoted prompt opens the UI", args: []string{"fix the failing test"}, ui: true, first: "fix the failing test"},
		{name: "typo of a command", args: []string{"setings"}, code: 2, errWant: `unknown command "setings" for "rally"; did you mean "settings"?`},
		{name: "bare word", args: []string{"hello"}, code: 2, errWant: `unknown command "hello" for "rally"; to send it as a prompt: rally -p "hello"`},
		{name: "bare word naming a flag", args: []string{"version"}, code: 2, errWant: `unknown command "version" for "rally"; did you mean "rally --version"?`},
		{name: "several bare words", args: []string{"fix", "the", "bug"}, code: 2, errWant: `unknown command "fix"`},
		{name: "quoted then more", args: []string{"fix this", "now"}, code: 2, errWant: "give the first prompt as one quoted argument"},
		{name: "bad flag", args: []string{"--no-such-flag"}, code: 2, errWant: "unknown flag: --no-such-flag"},
		{name: "bad flag value", args: []string{"--max-turns", "many"}, code: 2, errWant: "invalid argument"},
		{name: "bare word in json mode", args: []string{"--mode", "json", "hello"}, code: 2, errWant: `unknown command "hello"`},
		{name: "-p takes a bare word", args: []string{"-p", "hello"}, out: "an answer\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(srv.Requests())
			var out, errb bytes.Buffer
			var opened bool
			var first string
			s := streams{in: strings.NewReader(""), out: &out, err: &errb, ui: func(_ *cobra.Command, _ streams, _ *runFlags, p string) error {
				opened, first = true, p
				return nil
			}}
			code := execute(s, append(append([]string{}, fake...), c.args...))
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errb.String())
			}
			if opened != c.ui || first != c.first {
				t.Errorf("ui opened %v with %q, want %v with %q", opened, first, c.ui, c.first)
			}
			if !strings.Contains(errb.String(), c.errWant) {
				t.Errorf("stderr %q, want it to contain %q", errb.String(), c.errWant)
			}
			if c.out != "" && out.String() != c.out {
				t.Errorf("stdout %q, want %q", out.String(), c.out)
			}
			sent := len(srv.Requests()) - before
			if wantSent := map[bool]int{true: 1, false: 0}[c.out != ""]; sent != wantSent {
				t.Errorf("%d requests reached the model, want %d", sent, wantSent)
			}
		})
	}
}

// TestUISessions checks /resume's list: this directory's sessions, newest
// first, with their first prompt and message count.
func TestUISessions(t *testing.T) {
	dir := t.TempDir()
	write := func(prompts ...string) string {
		j, err := journal.Create(dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		for _, p := range prompts {
			if _, err := j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(p)}}, false); err != nil {
				t.Fatal(err)
			}
		}
		return j.Path()
	}
	old := write("the older one", "and more")
	newer := write("the newer one")
	// Modification times decide, whatever the names say.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a session"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := uiHost{&rpcBackend{f: runFlags{sessionDir: dir}}}
	got, err := h.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != newer || got[1].Path != old {
		t.Fatalf("sessions %+v", got)
	}
	if got[0].FirstPrompt != "the newer one" || got[1].FirstPrompt != "the older one" || got[1].Messages != 2 {
		t.Fatalf("sessions %+v", got)
	}
	h = uiHost{&rpcBackend{f: runFlags{sessionDir: filepath.Join(dir, "none")}}}
	if got, err := h.Sessions(); err != nil || len(got) != 0 {
		t.Fatalf("no directory: %v %v", got, err)
	}
}

// TestUINoTerminal: plain rally without a terminal (rally </dev/null, a
// script) says what to do instead and exits 2; it used to exit 1 with
// bubbletea's raw TTY error. /dev/null is a character device, which is
// not a terminal.
func TestUINoTerminal(t *testing.T) {
	isolate(t)
	const want = `rally: no terminal for the interactive UI; use rally -p "prompt", or pipe a prompt on stdin: echo "prompt" | rally` + "\n"
	for _, args := range [][]string{nil, {"a quoted first prompt"}} {
		t.Run(strings.Join(append([]string{"rally"}, args...), " "), func(t *testing.T) {
			null, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer null.Close()
			var out, errb bytes.Buffer
			code := execute(streams{in: null, out: &out, err: &errb}, append([]string{"--no-session"}, args...))
			if code != 2 || errb.String() != want || out.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out.String(), errb.String(), want)
			}
		})
	}
	// A prompt on stdin still runs without a terminal.
	out, errOut, code := run(t, "What does rally do?", "--no-session")
	if code != 0 || !strings.Contains(out, "survive provider failures") {
		t.Fatalf("piped prompt: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestUINotices: under the UI, a line written to the run's stderr becomes
// a UI notice (kept for a UI that has not started yet) and a log record;
// a fleet wait is for the status line; once the UI has ended, lines go to
// the real stderr.
func TestUINotices(t *testing.T) {
	var logs, after bytes.Buffer
	alerts := &tui.Alerts{}
	u := &uiNotices{alerts: alerts, log: slog.New(slog.NewJSONHandler(&logs, nil)), after: &after}
	fmt.Fprintf(u, "rally: every credential of acme is blocked by a usage limit (see rally auth list); using fallback openai/gpt-4.1\nrally: half ")
	fmt.Fprintf(u, "a line\n")
	var _ waitShower = u
	got := alerts.Drain()
	want := []string{"every credential of acme is blocked by a usage limit (see rally auth list); using fallback openai/gpt-4.1", "half a line"}
	if !slices.Equal(got, want) || after.Len() != 0 {
		t.Fatalf("notices %q, stderr %q; want %q and nothing", got, after.String(), want)
	}
	if !strings.Contains(logs.String(), `"msg":"ui notice","text":"half a line"`) {
		t.Errorf("log %s", logs.String())
	}
	fmt.Fprintln(u, "rally: after the UI")
	u.showWait("fleet: waiting 2s", 2*time.Second)
	if after.String() != "rally: after the UI\nrally: fleet: waiting 2s\n" {
		t.Errorf("stderr after the UI ended %q", after.String())
	}
}
