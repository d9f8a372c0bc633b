package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/rally-agent/rally/internal/proctest"
)

// The console's credential and another server on this machine (issue 24
// defect 7, issue 30 item 7), in a real browser: cookies are not kept
// apart by port, so whatever the console hands the browser must not come
// back to any other local port.

// recorder is a plain local server that keeps the Cookie headers it gets.
type recorder struct {
	mu      sync.Mutex
	cookies []string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.cookies = append(rc.cookies, r.URL.Path+": "+r.Header.Get("Cookie"))
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	w.Write([]byte("<!doctype html><title>other</title>another local server"))
}

func TestBrowserCredentialReachesNoOtherLocalServer(t *testing.T) {
	ctx := browser(t)
	a := newEnvWith(t, Config{Token: "console-a-token-0123456789"})
	b := newEnvWith(t, Config{Token: "console-b-token-9876543210"})
	rc := &recorder{}
	other := httptest.NewServer(rc)
	t.Cleanup(other.Close)

	open := func(t *testing.T, e *env) {
		t.Helper()
		resp := follow(t, ctx, "open the printed address", chromedp.Navigate(e.ts.URL+"/?token="+e.srv.Token()))
		if resp.Status != http.StatusOK {
			t.Fatalf("printed address: %d", resp.Status)
		}
	}
	status := func(t *testing.T, url string) int64 {
		t.Helper()
		return follow(t, ctx, "open "+url, chromedp.Navigate(url)).Status
	}
	open(t, a)
	open(t, b)

	t.Run("two consoles stay logged in", func(t *testing.T) {
		for _, e := range []*env{a, b, a} {
			for _, p := range []string{"/settings", "/sessions"} {
				if got := status(t, e.url(p)); got != http.StatusOK {
					t.Fatalf("%s after opening both consoles: %d, want 200 (one logged the other out)", e.url(p), got)
				}
			}
		}
	})

	t.Run("no other local port receives the token", func(t *testing.T) {
		// A dev server the user opens by hand, at the paths the console
		// uses and at the console's own secret path on the wrong port.
		for _, p := range []string{"/", "/settings", "/sessions", "/c/", "/static/style.css"} {
			status(t, other.URL+p)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.cookies) == 0 {
			t.Fatal("the other server saw no request")
		}
		for _, c := range rc.cookies {
			for _, tok := range []string{a.srv.Token(), b.srv.Token()} {
				if strings.Contains(c, tok) {
					t.Fatalf("another local server received a console's token: %s", c)
				}
			}
		}
	})
}

// codeRe finds the code rally web prints for a change of hooks.
var codeRe = regexp.MustCompile(`type this code there: ([A-Z0-9]+)\n`)

func TestHooksFromTheWebNeedTheTerminalCode(t *testing.T) {
	term := &proctest.Buffer{}
	e := newEnvWith(t, Config{Token: "test-token-0123456789", Terminal: term})
	global := e.src.Global.Path
	const hook = `[{"on": ["agent_end"], "command": ["touch", "/tmp/pwned"]}]`
	lastCode := func() string {
		m := codeRe.FindAllStringSubmatch(term.String(), -1)
		if m == nil {
			return ""
		}
		return m[len(m)-1][1]
	}
	save := func(t *testing.T, hooks, code string) (int, string) {
		t.Helper()
		form := e.load(t, "global")
		form.Set("hooks", hooks)
		if code != "" {
			form.Set("_confirm", code)
		}
		return e.post(t, form, nil)
	}

	t.Run("the credential alone", func(t *testing.T) {
		code, body := save(t, hook, "")
		if code != http.StatusForbidden || !strings.Contains(body, "code that rally web just printed") || !strings.Contains(body, `name="_confirm"`) {
			t.Fatalf("hooks without the code: %d, want 403 asking for the code", code)
		}
		if got := readFile(t, global); got != "" {
			t.Fatalf("hooks written without the code:\n%s", got)
		}
		if lastCode() == "" {
			t.Fatalf("no code printed on the terminal: %q", term.String())
		}
		if strings.Contains(body, lastCode()) {
			t.Fatal("the page shows the code it asks for")
		}
	})
	t.Run("a wrong code is spent", func(t *testing.T) {
		first := lastCode()
		if code, _ := save(t, hook, "WRONG234"); code != http.StatusForbidden {
			t.Fatalf("wrong code: %d, want 403", code)
		}
		if code, _ := save(t, hook, first); code != http.StatusForbidden {
			t.Fatalf("a code refused once works afterwards: %d, want 403", code)
		}
		if readFile(t, global) != "" {
			t.Fatal("hooks written with a wrong code")
		}
	})
	t.Run("the printed code", func(t *testing.T) {
		c := lastCode()
		if code, body := save(t, hook, strings.ToLower(c)); code != http.StatusSeeOther {
			t.Fatalf("the printed code: %d\n%s", code, body)
		}
		if got := readFile(t, global); !strings.Contains(got, "/tmp/pwned") {
			t.Fatalf("hooks not saved with the code:\n%s", got)
		}
		// Used once: another change of hooks needs a new one.
		if code, _ := save(t, `[]`, c); code != http.StatusForbidden {
			t.Fatalf("a code used twice: %d, want 403", code)
		}
	})
	t.Run("other settings need no code", func(t *testing.T) {
		form := e.load(t, "global")
		form.Set("retry.maxRetries", "7")
		if code, body := e.post(t, form, nil); code != http.StatusSeeOther {
			t.Fatalf("retry.maxRetries: %d\n%s", code, body)
		}
	})
	t.Run("no terminal: never from the web", func(t *testing.T) {
		e := newEnv(t)
		form := e.load(t, "global")
		form.Set("hooks", hook)
		code, body := e.post(t, form, nil)
		if code != http.StatusForbidden || !strings.Contains(body, "rally settings set hooks") {
			t.Fatalf("hooks with no terminal: %d, want 403 naming rally settings set", code)
		}
	})
}
