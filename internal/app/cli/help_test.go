package cli

import (
	"strings"
	"testing"
)

// rally --help lists every command with its one-line description and an
// example line under it.
func TestRootHelpListsEveryCommand(t *testing.T) {
	isolate(t)
	out, errOut, code := run(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, commands, ok := strings.Cut(out, "\nCommands:\n")
	if !ok {
		t.Fatalf("no Commands section:\n%s", out)
	}
	commands, _, _ = strings.Cut(commands, "\n\nFlags:")
	root := newRoot(streams{})
	rootHelp(root)
	lines := strings.Split(commands, "\n")
	seen := 0
	for _, c := range root.Commands() {
		if c.Hidden {
			continue
		}
		found := false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), c.Name()+" ") && strings.HasSuffix(l, c.Short) {
				found = true
				if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "      ") || !strings.Contains(lines[i+1], "rally ") {
					t.Errorf("%s has no example line under it:\n%s", c.Name(), commands)
				}
			}
		}
		if !found {
			t.Errorf("rally --help does not list %q with %q", c.Name(), c.Short)
		}
		seen++
	}
	for _, want := range []string{"models", "sessions", "settings", "auth", "fake-llm", "classify", "compact", "hooks", "fleet", "help", "completion"} {
		if !strings.Contains(commands, "\n  "+want+" ") && !strings.HasPrefix(commands, "  "+want+" ") {
			t.Errorf("%s missing from\n%s", want, commands)
		}
	}
	if seen < 11 {
		t.Errorf("only %d commands", seen)
	}
	// A subcommand keeps its own help.
	out, _, _ = run(t, "", "settings", "--help")
	if !strings.Contains(out, "rally settings [command]") {
		t.Errorf("settings --help:\n%s", out)
	}
}
