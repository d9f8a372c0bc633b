package web

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/rally-agent/rally/settings"
)

// The tests in this file each catch mutants that lived through the rest of
// the web tests (scripts/mutate.sh) in the console's security checks.

// TestConsoleWithoutConfiguredToken: a console built with no token makes
// a random one and lets in only that: an empty token in the address, or
// an empty cookie, is refused. Bug caught: the empty token kept, so
// "?token=" opens the console.
func TestConsoleWithoutConfiguredToken(t *testing.T) {
	root := t.TempDir()
	srv, err := New(Config{Settings: settings.Locate(filepath.Join(root, "home"), filepath.Join(root, "proj"), func(string) string { return "" }),
		SessionDir: filepath.Join(root, "sessions")})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Token()) < 32 {
		t.Fatalf("token %q, want a random one", srv.Token())
	}
	for _, tt := range []struct {
		name string
		req  *http.Request
	}{
		{"empty token in the address", httptest.NewRequest("GET", "/?token=", nil)},
		{"empty cookie", func() *http.Request {
			r := httptest.NewRequest("GET", srv.Base(), nil)
			r.Host = "127.0.0.1"
			r.AddCookie(&http.Cookie{Name: cookieName(r), Value: ""})
			return r
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Host = "127.0.0.1"
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, tt.req)
			if w.Code != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", w.Code)
			}
		})
	}
}
