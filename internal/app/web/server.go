// Package web is rally's local web console: a settings form
// generated from the settings schema, and the session files of a project as
// transcripts with a timeline of their model calls, failures, waits and
// retries. It serves one user on one machine: loopback only, a random
// access token, no cross-origin writes, a Content Security Policy that
// allows no script at all.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rally-agent/rally/internal/htmlw"
	"github.com/rally-agent/rally/settings"
)

//go:embed static/*
var assets embed.FS

// Config is what one console serves.
type Config struct {
	// Settings are the global and project settings files.
	Settings settings.Sources
	// SessionDir holds the project's session files.
	SessionDir string
	// Token is the access token; empty picks a random one.
	Token string
	// Keys are the API keys rally knows: never shown, even where a session
	// file holds one. Key-shaped tokens are hidden without them too.
	Keys []string
	// Terminal is where rally web prints the one-time code that confirms
	// a change of hooks (commands rally runs): the person at the terminal
	// sees it, a process that stole the console's cookie does not. Nil:
	// hooks cannot be changed from the console.
	Terminal io.Writer
}

// Server is the console's http.Handler.
type Server struct {
	cfg   Config
	token string
	// base is the secret path every page lives under, "/c/<random>/":
	// the cookie is scoped to it, so no other server on this machine
	// receives it (see auth.go).
	base    string
	hooks   *confirmer
	loads   limiter // session files being read (maxLoads)
	sums    *summaries
	handler http.Handler
}

// New builds a console.
func New(cfg Config) (*Server, error) {
	token := cfg.Token
	if token == "" {
		token = randomHex(24)
	}
	if _, err := loadSchema(); err != nil {
		return nil, err
	}
	sums := newSummaries(cfg.SessionDir, cfg.Keys)
	s := &Server{cfg: cfg, token: token, base: "/c/" + randomHex(16) + "/", hooks: newConfirmer(cfg.Terminal),
		loads: sums.loads, sums: sums}
	static, _ := fs.Sub(assets, "static")
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/settings", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /settings", s.settingsPage)
	mux.HandleFunc("POST /settings", s.saveSettings)
	mux.HandleFunc("GET /sessions", s.sessionsPage)
	mux.HandleFunc("GET /sessions/{name}", s.sessionPage)
	// Writes from other origins are refused (403) before anything else
	// looks at them; the token check then guards every request.
	s.handler = secureHeaders(checkHost(s.checkToken(http.NewCrossOriginProtection().Handler(mux))))
	return s, nil
}

// Token returns the access token.
func (s *Server) Token() string { return s.token }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// URL is the address to open: it carries the token, which the first visit
// trades for a cookie scoped to the console's secret path.
func (s *Server) URL(addr net.Addr) string {
	return "http://" + addr.String() + "/?token=" + s.token
}

// ErrNotLoopback is returned by Listen for an address other machines could
// reach.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen opens addr, which must be a loopback address (127.0.0.1:7878,
// [::1]:0, localhost:7878): the console edits settings and shows
// transcripts, and is for the person at this machine only.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen %q: %w", addr, err)
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addr[len(host)+1:])
	} else if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("web: listen %q: %w; the console serves this machine only (use 127.0.0.1 or [::1])", addr, ErrNotLoopback)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("web: %w (another rally web may be running there; --listen 127.0.0.1:0 picks a free port)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return ln, nil
}

// Serve serves on ln until ctx ends, then shuts down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	// Read the session summaries while the user opens the browser, so the
	// first visit to the sessions page finds them ready.
	wctx, stop := context.WithCancel(ctx)
	var warm sync.WaitGroup
	warm.Go(func() { _, _, _ = s.sums.list(wctx, 0, -1) })
	defer warm.Wait() // after stop, below: defers run last first
	defer stop()
	select {
	case err := <-done:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return hs.Close()
	}
	return nil
}

// csp allows nothing but the console's own stylesheet, forms posting to
// itself and links: no script runs on any page, whatever a session holds.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses a Host that is not a loopback name, so a web page whose
// DNS name is rebound to 127.0.0.1 cannot talk to the console as itself.
func checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		ip := net.ParseIP(strings.Trim(host, "[]"))
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "rally web: unexpected Host "+r.Host+"; open the console at 127.0.0.1", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// render writes the page that write builds. Building it cannot fail:
// the page data is ours and htmlw escapes every value.
func (s *Server) render(w http.ResponseWriter, status int, write func(*htmlw.Writer)) {
	var page htmlw.Writer
	write(&page)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(s.rebase(w, page.Bytes()))
}

// date writes a session's start in local time; nothing for none.
func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
