package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hostile input to the console's pages (issue 24 defect 11, issue 30 item
// 6): names and hosts a user did not make.

func TestHostCheckRefusesLookalikes(t *testing.T) {
	h := checkHost(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1", http.StatusNoContent},
		{"127.0.0.1:7878", http.StatusNoContent},
		{"localhost:7878", http.StatusNoContent},
		{"[::1]:7878", http.StatusNoContent},
		// DNS names an attacker controls, rebound to 127.0.0.1.
		{"localhost.attacker.example", http.StatusMisdirectedRequest},
		{"localhost.attacker.example:7878", http.StatusMisdirectedRequest},
		{"127.0.0.1.attacker.example:7878", http.StatusMisdirectedRequest},
		{"attacker.example:7878", http.StatusMisdirectedRequest},
		{"localhostattacker.example", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
	} {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/settings", nil)
			req.Host = tc.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.want {
				t.Fatalf("Host %q: status %d, want %d", tc.host, w.Code, tc.want)
			}
		})
	}
}

func TestSessionPageOpensOnlyWhatTheListShows(t *testing.T) {
	e := newEnv(t)
	shown := retrySession("11111111-1111-4111-8111-111111111111").write(t, e.sessions)
	// A session file outside the directory, linked in under a session's
	// name: the list hides it (not a plain file), so the page must too.
	outside := t.TempDir()
	secret := retrySession("22222222-2222-4222-8222-222222222222")
	secretName := secret.write(t, outside)
	link := "2026-03-04T10-00-00-000Z_33333333-3333-4333-8333-333333333333.jsonl"
	if err := os.Symlink(filepath.Join(outside, secretName), filepath.Join(e.sessions, link)); err != nil {
		t.Fatal(err)
	}
	dir := "2026-03-04T10-00-00-000Z_44444444-4444-4444-8444-444444444444.jsonl"
	if err := os.Mkdir(filepath.Join(e.sessions, dir), 0o700); err != nil {
		t.Fatal(err)
	}
	_, list := e.get(t, "/sessions")
	if !strings.Contains(list, shown) || strings.Contains(list, link) {
		t.Fatalf("the list should show %s and hide the symlink %s", shown, link)
	}
	for _, tc := range []struct{ name, path string }{
		{"symlink", "/sessions/" + link},
		{"directory", "/sessions/" + dir},
		{"NUL", "/sessions/a%00b.jsonl"},
		{"control character", "/sessions/a%01b.jsonl"},
		{"no such file", "/sessions/2026-03-04T10-00-00-000Z_55555555-5555-4555-8555-555555555555.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.get(t, tc.path)
			if code != http.StatusNotFound || !strings.Contains(body, "no such session") {
				t.Fatalf("GET %s: %d %q, want 404 no such session", tc.path, code, body)
			}
			if strings.Contains(body, "What does rally do?") {
				t.Fatal("the page shows the linked file's transcript")
			}
		})
	}
	if code, _ := e.get(t, "/sessions/"+shown); code != http.StatusOK {
		t.Fatalf("GET the listed session: %d", code)
	}
}

func TestSessionsPagePastTheLast(t *testing.T) {
	e := newEnv(t)
	retrySession("11111111-1111-4111-8111-111111111111").write(t, e.sessions)
	for _, tc := range []struct {
		page string
		want int
		says string
	}{
		{"1", http.StatusOK, "1–1 of 1"},
		{"2", http.StatusNotFound, "past the last"},
		{"99999", http.StatusNotFound, "past the last"},
	} {
		t.Run(tc.page, func(t *testing.T) {
			code, body := e.get(t, "/sessions?page="+tc.page)
			if code != tc.want || !strings.Contains(body, tc.says) || strings.Contains(body, "No sessions yet") {
				t.Fatalf("page %s: %d, want %d saying %q and not %q:\n%s", tc.page, code, tc.want, tc.says, "No sessions yet", body)
			}
		})
	}
}

func TestNewEntryNameIsOneSegment(t *testing.T) {
	e := newEnv(t)
	global := e.src.Global.Path
	for _, name := range []string{"[0]", "a.b", "x[1]", "[0].api"} {
		t.Run(name, func(t *testing.T) {
			form := e.load(t, "global")
			form.Set("_new.providers", name)
			form.Set("_new.providers.api", "openai-completions")
			form.Set("_new.providers.baseUrl", "http://127.0.0.1:8080/v1")
			code, body := e.post(t, form, nil)
			if code != http.StatusUnprocessableEntity || !strings.Contains(body, "cannot be a name") {
				t.Fatalf("provider %q: %d, want 422 'cannot be a name'", name, code)
			}
			if got := readFile(t, global); got != "" {
				t.Fatalf("provider %q: the file was written:\n%s", name, got)
			}
		})
	}
	form := e.load(t, "global")
	form.Set("_new.providers", "vllm-2")
	form.Set("_new.providers.api", "openai-completions")
	form.Set("_new.providers.baseUrl", "http://127.0.0.1:8080/v1")
	if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
		t.Fatalf("a good name: %d %s", code, body)
	}
	if got := readFile(t, global); !strings.Contains(got, `"vllm-2"`) {
		t.Fatalf("the good name was not saved:\n%s", got)
	}
}
