package cli

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// usageLimited is a usage-limit error that resets in 5 h and echoes the
// key it was sent with, as some providers do.
func usageLimited(key string) llmtest.Step {
	return llmtest.Step{Fault: llmtest.HTTPError, Status: 429,
		Header: map[string]string{"retry-after": "18000"},
		Body:   `{"error":{"message":"Daily usage limit reached for key ` + key + `.","type":"usage_limit_reached","code":"usage_limit_reached"}}`}
}

func writeProjectSettings(t *testing.T, body string) {
	t.Helper()
	os.MkdirAll(".rally", 0o755)
	if err := os.WriteFile(".rally/settings.json", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRotationEndToEnd drives rally over the fake LLM with two keys on one
// one-run provider ("acme") and a fallback provider ("backup"), through
// usage limits, across processes, until nothing is left and then until the
// limits reset. It ends by grepping everything rally wrote for the keys.
func TestRotationEndToEnd(t *testing.T) {
	home := isolate(t)
	for _, c := range []struct{ provider, id, key string }{{"acme", "a", testKeyA}, {"acme", "b", testKeyB}, {"backup", "c", testKeyC}} {
		if _, errOut, code := run(t, c.key, "auth", "add", c.provider, "--id", c.id, "--key", "-"); code != 0 {
			t.Fatalf("auth add: %s", errOut)
		}
	}
	backup := llmtest.NewServer(t, llmtest.Step{Text: "the fallback answers"})
	const base = `{"retry":{"baseDelayMs":1%s},"providers":{"backup":{"api":"openai-completions","baseUrl":"%s/v1"}}}`
	noFallback := fmt.Sprintf(base, "", backup.URL)
	withFallback := fmt.Sprintf(base, `,"fallbackModels":["openai/gpt-4o","backup/m2"]`, backup.URL)
	writeProjectSettings(t, noFallback)
	acme := func(srv *llmtest.Server, extra ...string) []string {
		return append([]string{"--mode", "json", "--provider", "acme", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m", "-p", "hi"}, extra...)
	}
	texts := map[string]string{}
	keep := func(name, out, errOut string) { texts[name+" stdout"], texts[name+" stderr"] = out, errOut }

	t.Run("A exhausted: the retry goes out at once with B", func(t *testing.T) {
		srv := llmtest.NewServer(t, usageLimited(testKeyA), llmtest.Step{Text: "B answers"})
		out, errOut, code := run(t, "", acme(srv)...)
		keep("run 1", out, errOut)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 || reqs[0].Credential != "sk-…1111" || reqs[1].Credential != "sk-…2222" {
			t.Fatalf("requests %+v, want A then B", reqs)
		}
		starts := ofType(events(t, out), "auto_retry_start")
		if len(starts) != 1 || starts[0]["delayMs"] != 0.0 || starts[0]["switchedTo"] != "b" || starts[0]["errorClass"] != "usage_limit" {
			t.Errorf("auto_retry_start %v, want delayMs 0 and switchedTo b", starts)
		}
		ms := marksOf(t, home)
		if len(ms) != 1 || ms[0].Provider != "acme" || ms[0].ID != "a" || time.Until(ms[0].Until) < 4*time.Hour {
			t.Errorf("marks %+v, want acme/a for ~5h", ms)
		}
	})

	t.Run("a new process starts on B", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Step{Text: "B again"})
		out, errOut, code := runMain(t, acme(srv)...)
		keep("run 2", out, errOut)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Credential != "sk-…2222" {
			t.Errorf("requests %+v, want one with B", reqs)
		}
	})

	t.Run("B exhausted too: the fallback answers", func(t *testing.T) {
		writeProjectSettings(t, withFallback)
		srv := llmtest.NewServer(t, usageLimited(testKeyB))
		out, errOut, code := run(t, "", acme(srv)...)
		keep("run 3", out, errOut)
		if code != 0 || !strings.Contains(out, "the fallback answers") {
			t.Fatalf("exit %d: %s\n%s", code, errOut, out)
		}
		if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Credential != "sk-…2222" {
			t.Errorf("acme requests %+v, want one with B", reqs)
		}
		if reqs := backup.Requests(); len(reqs) != 1 || reqs[0].Credential != "sk-…3333" || reqs[0].Model != "m2" {
			t.Errorf("backup requests %+v, want m2 with C", reqs)
		}
		starts := ofType(events(t, out), "auto_retry_start")
		if len(starts) != 1 || starts[0]["delayMs"] != 0.0 || starts[0]["switchedTo"] != "backup/m2" {
			t.Errorf("auto_retry_start %v", starts)
		}
	})

	t.Run("both blocked: a new session starts on the fallback", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Step{Text: "never"})
		out, errOut, code := run(t, "", acme(srv)...)
		keep("run 4", out, errOut)
		if code != 0 || len(srv.Requests()) != 0 || len(backup.Requests()) != 2 {
			t.Errorf("exit %d, %d acme and %d backup requests: %s", code, len(srv.Requests()), len(backup.Requests()), errOut)
		}
		if !strings.Contains(errOut, "every credential of acme is blocked by a usage limit (see rally auth list); using fallback backup/m2") {
			t.Errorf("stderr %q", errOut)
		}
	})

	t.Run("nothing left: a fast failure naming the reset", func(t *testing.T) {
		writeProjectSettings(t, noFallback)
		srv := llmtest.NewServer(t, usageLimited(testKeyA), llmtest.Step{Text: "never"})
		clock := morningClock()
		start := clock()
		out, errOut, code := runAt(t, clock, "", acme(srv)...)
		keep("run 5", out, errOut)
		if code != 1 || len(srv.Requests()) != 1 {
			t.Fatalf("exit %d after %d requests: %s", code, len(srv.Requests()), errOut)
		}
		reset := start.Add(5 * time.Hour).Format("15:04")
		if !strings.Contains(errOut, "usage limit: resets at "+reset) || !strings.Contains(errOut, "(in 5h0m)") {
			t.Errorf("stderr %q, want it to name the reset at %s", errOut, reset)
		}
		if n := len(ofType(events(t, out), "auto_retry_start")); n != 0 {
			t.Errorf("%d retries before failing", n)
		}
	})

	t.Run("auth list shows the blocks", func(t *testing.T) {
		out, errOut, code := run(t, "", "auth", "list")
		keep("auth list", out, errOut)
		if code != 0 || strings.Count(out, "blocked until ") != 2 || !strings.Contains(out, "(in 4h59m)") && !strings.Contains(out, "(in 5h0m)") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	t.Run("after the reset A is used again", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Step{Text: "A is back"})
		later := func() time.Time { return time.Now().Add(6 * time.Hour) }
		sess := sessionAt(t, home, settings.Overrides{Provider: "acme", API: "openai-completions", BaseURL: srv.URL + "/v1", Model: "m"}, later)
		if err := sess.Prompt(t.Context(), "hi", session.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Credential != "sk-…1111" {
			t.Errorf("requests %+v, want one with A", reqs)
		}
	})

	t.Run("no key anywhere", func(t *testing.T) {
		out, errOut, _ := run(t, "", "settings", "get")
		keep("settings get", out, errOut)
		files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
		files = append(files, filepath.Join(home, "logs", "rally.log"), auth.MarksPath(home))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts[f] = string(b)
		}
		if len(files) < 7 {
			t.Errorf("only %d files to check: %v", len(files), files)
		}
		for name, text := range texts {
			for _, m := range testKeyMiddles {
				if strings.Contains(text, m) {
					t.Errorf("a key leaked into %s", name)
				}
			}
		}
	})
}

// sessionAt builds a run's session the way newRunEnv does, with the
// credential choice on a clock of the test's own.
func sessionAt(t *testing.T, home string, o settings.Overrides, now func() time.Time) *session.Session {
	t.Helper()
	st, err := loadSettings(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	target, err := st.Resolve(o, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	model, err := modelFor(target)
	if err != nil {
		t.Fatal(err)
	}
	pol := st.RetryPolicy(target.Provider)
	cfg := session.Config{Model: model, Retry: pol.For}
	var logs bytes.Buffer
	a := authRun{home: home, st: st, target: target, getenv: os.Getenv, now: now, log: slog.New(slog.NewTextHandler(&logs, nil)), stderr: io.Discard}
	if _, err := useAuth(t.Context(), &cfg, a); err != nil {
		t.Fatal(err)
	}
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
