package cli

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/session/journal"
)

// TestCompactionOffline runs the README's compaction demo: the sim-tiny
// model's window would overflow after a few tool results; rally knows the
// window, compacts before the call that would pass it, and finishes the
// task without a single overflow.
func TestCompactionOffline(t *testing.T) {
	home := isolate(t)
	out, errOut, code := run(t, "", "--provider", "sim", "--model", "sim-tiny", "-p", "run seq 1 200 then seq 201 400 then seq 401 600 then seq 601 800")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "compacting the conversation (threshold)") || strings.Contains(errOut, "(overflow)") || !strings.Contains(out, "Done: 4 steps") {
		t.Errorf("stdout %q\nstderr %q", out, errOut)
	}
	if strings.Contains(errOut, "retrying") {
		t.Errorf("an overflow produced a retry: %s", errOut)
	}
	files := sessionFiles(t, home)
	loaded, err := journal.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loaded.Messages[0].TextOf(), "## Done\n- bash: seq 1 200") {
		t.Errorf("resumed context starts with %q", loaded.Messages[0].TextOf())
	}
}

func TestCompactCommand(t *testing.T) {
	isolate(t)
	if _, errOut, code := run(t, "", "compact"); code != 1 || !strings.Contains(errOut, "no session to compact") {
		t.Errorf("compact with no session: exit %d, %q", code, errOut)
	}
	for _, p := range []string{"run echo one", "run echo two", "run echo three"} {
		if _, errOut, code := run(t, "", "--continue", "-p", p); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errOut)
		}
	}
	out, errOut, code := run(t, "", "compact", "--provider", "sim", "--model", "sim-tiny")
	if code != 0 || !strings.Contains(out, "## Goal\nrun echo one") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}
