package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSessionPage feeds any bytes to the session page as a session file:
// the page must render (or refuse the file with an error), never panic,
// and never carry a script tag, whatever the file holds.
func FuzzSessionPage(f *testing.F) {
	for _, j := range []*fixture{retrySession("a"), scriptSession("b"), benchSession("c", t0, 30)} {
		f.Add([]byte(strings.Join(j.lines, "\n")))
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"x"}` + "\n" + `{"type":"message","id":"1","timestamp":"1970-01-01T00:00:00Z","message":{"role":"assistant","stopReason":"error","timestamp":-99999999999999}}`))
	f.Add([]byte("not a session"))
	dir := f.TempDir()
	srv, err := New(Config{SessionDir: dir, Token: "fuzz-token-0123456789"})
	if err != nil {
		f.Fatal(err)
	}
	const name = "2026-01-01T00-00-00-000Z_fuzz.jsonl"
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/sessions/" + name, "/sessions"} {
			w := serveAuthed(srv, path)
			if w.Code != 200 && w.Code != 500 {
				t.Fatalf("GET %s: %d", path, w.Code)
			}
			if strings.Contains(strings.ToLower(w.Body.String()), "<script") {
				t.Fatalf("GET %s: a script tag in the page", path)
			}
		}
	})
}
