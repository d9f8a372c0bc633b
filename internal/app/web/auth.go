package web

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The console's credential must reach no other server on this machine.
// Cookies are not kept apart by port: a cookie set by 127.0.0.1:7878 goes
// to 127.0.0.1:8000 too, so a token cookie on "/" (as Jupyter and VS
// Code's server use, with the port in its name at best) is handed to every
// local dev server the browser visits, and with it the whole console. The
// one attribute a browser does scope a cookie by is its Path. So every
// page lives under a secret path, base ("/c/<128 random bits>/"), and the
// cookie is scoped to it: another server receives the cookie only for a
// request to that path, which it cannot name. A request needs both, the
// path and the cookie; the path is never sent elsewhere (Referrer-Policy:
// no-referrer, and pages link only to themselves). The pages run no
// script, so the credential cannot be an origin-scoped header either.
// Changing hooks, which run commands, further needs a code printed on
// rally web's terminal (confirm.go).

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// cookieName includes the port, so that consoles on different ports
// keep their cookies apart even in tools that ignore the Path.
func cookieName(r *http.Request) string {
	_, port, _ := net.SplitHostPort(r.Host)
	return "rally_web_" + port
}

// Base is the secret path the pages live under (for tests and the
// printed address).
func (s *Server) Base() string { return s.base }

// checkToken lets through a request under the secret path that carries
// the token's cookie, with the path taken off. A GET with the token in its
// query (the address rally web printed) gets the cookie and is redirected
// under the secret path without the token, so the token stays out of the
// history and the address bar.
func (s *Server) checkToken(next http.Handler) http.Handler {
	ok := func(v string) bool { return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method == http.MethodGet && q.Has("token") && ok(q.Get("token")) {
			http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: s.token, Path: s.base,
				HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := url.URL{Path: s.base + strings.TrimPrefix(r.URL.Path, "/"), RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		rest, under := s.under(r.URL.Path)
		if c, err := r.Cookie(cookieName(r)); under && err == nil && ok(c.Value) {
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath = rest, ""
			next.ServeHTTP(&baseWriter{ResponseWriter: w, base: s.base}, r2)
			return
		}
		http.Error(w, "rally web: unauthorized: open the address that `rally web` printed (it carries the access token)", http.StatusUnauthorized)
	})
}

// under reports whether path is under the secret path, and what follows
// it (with its leading slash). The comparison takes the same time whatever
// the path holds.
func (s *Server) under(path string) (string, bool) {
	n := len(s.base)
	if len(path) < n || subtle.ConstantTimeCompare([]byte(path[:n]), []byte(s.base)) != 1 {
		return "", false
	}
	return "/" + path[n:], true
}

// baseWriter puts the secret path back in front of the redirects the
// handlers write as site paths ("/settings?saved=1").
type baseWriter struct {
	http.ResponseWriter
	base string
}

func (w *baseWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		w.Header().Set("Location", w.base+loc[1:])
	}
	w.ResponseWriter.WriteHeader(code)
}

// rebase puts the secret path in front of the site paths a page links
// to: the pages write href="/settings", and every such attribute is
// ours, since html/template escapes a quote in anything a session holds.
func (s *Server) rebase(w http.ResponseWriter, page []byte) []byte {
	if _, ok := w.(*baseWriter); !ok {
		return page
	}
	for _, attr := range []string{`href="/`, `action="/`} {
		page = bytes.ReplaceAll(page, []byte(attr), []byte(attr+s.base[1:]))
	}
	return page
}
