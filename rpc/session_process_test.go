package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadWarningsOverProcess: what loading the resumed session skipped
// is in get_state's loadWarnings (and on stderr), and a new session has
// none.
func TestLoadWarningsOverProcess(t *testing.T) {
	isolate(t, "")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	file := `{"type":"session","version":3,"id":"0b0c8f8e-4b7e-4f55-9b1a-3f3c2b1a0d9e","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" +
		`{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n" +
		`{"type":"message","id":"bbbb`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--session", path)
	p.send(`{"id":"s1","type":"get_state"}`)
	st := p.response("s1")["data"].(map[string]any)
	ws, _ := st["loadWarnings"].([]any)
	if len(ws) != 1 || !strings.HasPrefix(ws[0].(string), "line 3: torn last line skipped") || st["messageCount"] != 1.0 {
		t.Fatalf("get_state: %v", st)
	}
	p.send(`{"id":"n1","type":"new_session"}`)
	p.response("n1")
	p.send(`{"id":"s2","type":"get_state"}`)
	if st := p.response("s2")["data"].(map[string]any); st["loadWarnings"] != nil {
		t.Errorf("a new session has load warnings: %v", st["loadWarnings"])
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if e := p.stderrText(); !strings.Contains(e, "rally: "+path+": line 3: torn last line skipped") {
		t.Errorf("stderr %q", e)
	}
}
