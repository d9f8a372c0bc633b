package web

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium headless through chromedp.
// Under CI=true a missing chromium fails them; elsewhere they are skipped.
// RALLY_WEB_SCREENSHOTS names a directory for the screenshots of each page
// (a temporary one by default); docs/web-console.png is one of them.

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; the web console's browser tests need it (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed")
	return ""
}

// browser starts a headless chromium with a fresh profile and returns a
// context for its first tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	profile := t.TempDir()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		// Without these Chromium's own connections are refused here and
		// it stalls at start.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// within runs steps with a deadline, failing the test on an error.
func within[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// follow runs an action that loads a page (a click on a button or a
// link) and returns the page's response once it has loaded.
func follow(t *testing.T, ctx context.Context, what string, a chromedp.Action[chromedp.Void]) *network.Response {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return resp
}

// screenshot saves the whole page as a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("RALLY_WEB_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png := within(t, ctx, "screenshot", chromedp.FullScreenshot(100))
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

func TestBrowser(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	global := e.src.Global.Path
	writeFile(t, global, `{"retry": {"maxRetries": 2}}`+"\n")
	retried := retrySession("66666666-6666-4666-8666-666666666666")
	retried.tool(retried.at(3600), retried.at(4000), retried.at(5200), "bash", `{"command":"go test ./..."}`, "ok  \tgithub.com/rally-agent/rally/retry\t0.4s")
	retried.call(retried.at(5300), retried.at(7400), "All tests pass: rally retried the overloaded call after 2 s and carried on.", "", false)
	retried.compaction(retried.at(7500), "The user asked what rally does; the tests were run.")
	retryName := retried.write(t, e.sessions)
	scriptName := scriptSession("77777777-7777-4777-8777-777777777777").write(t, e.sessions)

	t.Run("save settings", func(t *testing.T) {
		// The printed URL: the token becomes a cookie, the page opens.
		within(t, ctx, "open", chromedp.Navigate(e.ts.URL+"/?token="+e.srv.Token()))
		if loc := within(t, ctx, "location", chromedp.Location()); loc != e.url("/settings") {
			t.Fatalf("landed on %s", loc)
		}
		within(t, ctx, "fill", chromedp.Steps(
			chromedp.SetValue(chromedp.CSS(`input[name="retry.maxRetries"]`), "5"),
			chromedp.SetValue(chromedp.CSS(`input[name="providers.openai.timeoutMs"]`), "12345"),
		))
		resp := follow(t, ctx, "save", chromedp.Click(chromedp.ID("save")))
		if resp.Status != 200 {
			t.Fatalf("after save: %d", resp.Status)
		}
		msg := within(t, ctx, "saved", chromedp.Text(chromedp.ID("saved")))
		if !strings.Contains(msg, "Saved: 2 change(s)") {
			t.Errorf("message %q", msg)
		}
		var got struct {
			Retry     struct{ MaxRetries int }
			Providers map[string]struct{ TimeoutMs int }
		}
		if err := json.Unmarshal([]byte(readFile(t, global)), &got); err != nil {
			t.Fatal(err)
		}
		if got.Retry.MaxRetries != 5 || got.Providers["openai"].TimeoutMs != 12345 {
			t.Errorf("file on disk:\n%s", readFile(t, global))
		}
		screenshot(t, ctx, "settings.png")
	})

	t.Run("invalid value", func(t *testing.T) {
		before := readFile(t, global)
		within(t, ctx, "fill", chromedp.SetValue(chromedp.CSS(`input[name="retry.maxRetries"]`), "101"))
		resp := follow(t, ctx, "save", chromedp.Click(chromedp.ID("save")))
		if resp.Status != 422 {
			t.Errorf("status %d", resp.Status)
		}
		msg := within(t, ctx, "inline error", chromedp.Text(chromedp.CSS(`.field.invalid .error[data-for="retry.maxRetries"]`)))
		if want := "retry.maxRetries: must be an integer from 0 to 100, got 101"; !strings.Contains(msg, want) {
			t.Errorf("inline error %q, want %q", msg, want)
		}
		if v := within(t, ctx, "value kept", chromedp.Value(chromedp.CSS(`input[name="retry.maxRetries"]`))); v != "101" {
			t.Errorf("input holds %q, want what was typed", v)
		}
		if got := readFile(t, global); got != before {
			t.Errorf("file changed:\n%s", got)
		}
		screenshot(t, ctx, "settings-invalid.png")
	})

	t.Run("session timeline", func(t *testing.T) {
		within(t, ctx, "sessions", chromedp.Navigate(e.url("/sessions")))
		screenshot(t, ctx, "sessions.png")
		follow(t, ctx, "open session", chromedp.Click(chromedp.CSS(`a[href="`+e.srv.Base()+`sessions/`+retryName+`"]`)))
		red := within(t, ctx, "red bars", chromedp.Evaluate[int](`document.querySelectorAll('#timeline rect.call.failed').length`))
		if red != 1 {
			t.Errorf("%d red bars, want 1", red)
		}
		fill := within(t, ctx, "bar colour", chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#timeline rect.call.failed')).fill`))
		if fill != "rgb(214, 59, 59)" {
			t.Errorf("failed bar drawn in %s, not red", fill)
		}
		waits := within(t, ctx, "waits", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline g.wait text')].map(e => e.textContent)`))
		if len(waits) != 1 || waits[0] != "wait 2.0s" {
			t.Errorf("wait labels %q, want one \"wait 2.0s\"", waits)
		}
		cls := within(t, ctx, "failure", chromedp.Text(chromedp.CSS(`#failures li`)))
		if !strings.Contains(cls, "transient: 529 overloaded_error: Overloaded") {
			t.Errorf("failure list %q", cls)
		}
		marks := within(t, ctx, "compaction", chromedp.Evaluate[int](`document.querySelectorAll('#timeline g.compaction').length`))
		if marks != 1 {
			t.Errorf("%d compaction marks", marks)
		}
		screenshot(t, ctx, "session.png")
	})

	t.Run("script inert", func(t *testing.T) {
		within(t, ctx, "open", chromedp.Navigate(e.url("/sessions/"+scriptName)))
		pwned := within(t, ctx, "pwned", chromedp.Evaluate[bool](`window.pwned !== undefined`))
		if pwned {
			t.Error("script from the session ran")
		}
		n := within(t, ctx, "elements", chromedp.Evaluate[int](`document.querySelectorAll('script, img, main svg:not(#timeline), [onerror], [onload]').length`))
		if n != 0 {
			t.Errorf("%d elements made from session text", n)
		}
		text := within(t, ctx, "text", chromedp.Text(chromedp.CSS(`.entry.user pre.text`)))
		if !strings.Contains(text, "<script>window.pwned=1</script>") {
			t.Errorf("user text shown as %q", text)
		}
		screenshot(t, ctx, "session-script.png")
	})
}
