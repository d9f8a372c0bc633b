package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestPiArgs(t *testing.T) {
	got := piArgs([]string{"-nc", "-nt", "-p", "hi", "--", "-ne"})
	want := []string{"--no-context-files", "--no-tools", "-p", "hi", "--", "-ne"}
	if !slices.Equal(got, want) {
		t.Fatalf("piArgs = %q, want %q (nothing after -- is rewritten)", got, want)
	}
}

// TestPiFlags: the flags pi's clients pass are accepted (done or ignored);
// the ones rally does not do are refused with what to use instead, as bad
// usage, before anything is sent.
func TestPiFlags(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"--no-themes", "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-mcp", "--offline", "-p", "hi"},
		{"-ne", "-ns", "-np", "-nc", "-na", "-e", "x.ts", "--theme", "t", "--models", "a,b", "-p", "hi"},
		{"-xt", "bash,write", "--system-prompt", "be brief", "-n", "my work", "-p", "hi"},
		{"-nbt", "-p", "hi"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, code := run(t, "", args...)
			if code != 0 || !strings.Contains(out, "hi") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--api-key", "sk-abc123", "-p", "hi"}, "visible to every user"},
		{[]string{"-r"}, "rally sessions --resume"},
		{[]string{"--fork", "x.jsonl", "-p", "hi"}, "fork"},
		{[]string{"--session-id", "abc", "-p", "hi"}, "--session FILE"},
		{[]string{"-xt", "grep", "-p", "hi"}, "unknown tool grep"},
		{[]string{"--mode", "acp", "hello"}, "takes no prompt argument"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, errOut, code := run(t, "", tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.says) {
				t.Fatalf("exit %d, stderr %q: want 2 and %q", code, errOut, tt.says)
			}
			if strings.Contains(errOut, "sk-abc123") {
				t.Fatal("the key given on the command line was echoed")
			}
		})
	}
}
