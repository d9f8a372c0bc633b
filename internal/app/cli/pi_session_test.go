package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rally-agent/rally/session/journal"
)

// TestPiLoadsRallySession: the pi coding agent's own SessionManager opens
// a session file rally wrote with its retry decisions in it, and reads
// the same context rally resumes from (the fields rally adds are ones pi
// does not know and skips).
func TestPiLoadsRallySession(t *testing.T) {
	node, testdata := piNode(t, "core/session-manager.js")
	home := isolate(t)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"baseDelayMs":5}}`), 0o644)
	if _, errOut, code := run(t, "", "--preset", "flaky", "-p", "What does rally do?"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"decision":{"attempt":1,"delayMs":5,"class":"transient"`) || !strings.Contains(string(data), `"end":"succeeded"`) {
		t.Fatalf("the file records no decisions:\n%s", data)
	}
	cmd := exec.CommandContext(t.Context(), node, filepath.Join(testdata, "pi-session.mjs"))
	cmd.Env = append(os.Environ(), "SESSION_FILE="+files[0])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pi's SessionManager on rally's file: %v\n%s", err, out)
	}
	var pi struct {
		ID       string
		Entries  int
		Messages []struct{ Role, StopReason string }
	}
	if err := json.Unmarshal(out, &pi); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ld, err := journal.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if pi.ID != ld.ID || pi.Entries != len(ld.Entries) {
		t.Errorf("pi read session %q with %d entries, rally %q with %d", pi.ID, pi.Entries, ld.ID, len(ld.Entries))
	}
	var piRoles, roles []string
	for _, m := range pi.Messages {
		piRoles = append(piRoles, m.Role+"/"+m.StopReason)
	}
	for _, m := range ld.Messages {
		roles = append(roles, string(m.Role)+"/"+string(m.StopReason))
	}
	t.Logf("pi's context: %q", piRoles)
	if len(piRoles) == 0 || len(piRoles) > len(ld.Entries) {
		t.Errorf("pi's context %q from %d entries", piRoles, len(ld.Entries))
	}
	// pi sends every message entry (it knows nothing of "retried"); rally
	// leaves the retried failures out. What both send ends the same way.
	if got, want := piRoles[len(piRoles)-1], roles[len(roles)-1]; got != want {
		t.Errorf("pi's context ends with %s, rally's with %s", got, want)
	}
}
