package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
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
		{name: "bare word", args: []string{"version"}, code: 2, errWant: `unknown command "version" for "rally"; to send it as a prompt: rally -p "version"`},
		{name: "several bare words", args: []string{"fix", "the", "bug"}, code: 2, errWant: `unknown command "fix"`},
		{name: "quoted then more", args: []string{"fix this", "now"}, code: 2, errWant: "give the first prompt as one quoted argument"},
		{name: "bad flag", args: []string{"--no-such-flag"}, code: 2, errWant: "unknown flag: --no-such-flag"},
		{name: "bad flag value", args: []string{"--max-turns", "many"}, code: 2, errWant: "invalid argument"},
		{name: "bare word in json mode", args: []string{"--mode", "json", "models"}, code: 2, errWant: `unknown command "models"`},
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
