package cli

import (
	"strings"
	"testing"
)

// TestSessionListAfterCompact: after `rally compact`, rally sessions and
// the UI's /resume list name the session by the prompt the user typed
// first, not by the compaction summary that now opens its context.
func TestSessionListAfterCompact(t *testing.T) {
	home := isolate(t)
	for _, args := range [][]string{
		{"-p", "first prompt here"},
		{"--continue", "-p", "second prompt"},
		{"compact"},
	} {
		if _, errOut, code := run(t, "", args...); code != 0 {
			t.Fatalf("rally %v: exit %d: %s", args, code, errOut)
		}
	}
	out, errOut, code := run(t, "", "sessions")
	if code != 0 {
		t.Fatalf("rally sessions: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "first prompt here") || strings.Contains(out, "compacted") {
		t.Errorf("rally sessions:\n%s", out)
	}
	h := uiHost{&rpcBackend{home: home}}
	list, err := h.Sessions()
	if err != nil || len(list) != 1 || list[0].FirstPrompt != "first prompt here" {
		t.Errorf("/resume's list %+v (%v), want the first prompt", list, err)
	}
}
