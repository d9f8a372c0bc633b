package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// realWeb runs rally web as a process of its own in this directory and
// returns a client holding its cookie and the console's secret address.
func realWeb(t *testing.T) (*http.Client, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "web", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("rally web: %v", err)
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`^rally web: open (http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]+\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(strings.TrimSpace(strings.TrimPrefix(line, "rally web: open ")))
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("printed URL: %v %v", resp, err)
	}
	resp.Body.Close()
	return c, m[1] + strings.TrimSuffix(resp.Header.Get("Location"), "settings")
}

// webForm loads the project settings page and returns a form holding its
// version, as the browser would submit it.
func webForm(t *testing.T, c *http.Client, base string) url.Values {
	t.Helper()
	resp, err := c.Get(base + "settings?_file=project")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="_version" value="([^"]*)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("settings page: %d, no version", resp.StatusCode)
	}
	return url.Values{"_file": {"project"}, "_version": {string(m[1])}}
}

// webSave posts form to the console as its own page would.
func webSave(t *testing.T, c *http.Client, base string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"settings", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	u, _ := url.Parse(base)
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// raceFile reads .rally/settings.json.
func raceFile(t *testing.T) (retries json.RawMessage, providers map[string]json.RawMessage, raw []byte) {
	t.Helper()
	raw, err := os.ReadFile(".rally/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Retry struct {
			MaxRetries json.RawMessage `json:"maxRetries"`
		} `json:"retry"`
		Providers map[string]json.RawMessage `json:"providers"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("settings file %q: %v", raw, err)
	}
	return doc.Retry.MaxRetries, doc.Providers, raw
}

// TestWebAndCLISavesRace (issue 24, defect 2): a real rally web and real
// rally settings set processes saving one project file at the same time.
// Whoever reports success has its value in the file; a loser is told (the
// console's 409 conflict page, the CLI's "changed on disk"), and a form
// loaded before a CLI save is refused, the CLI's value kept. Before the
// lock, the web's value was lost in 10 of 30 such races.
func TestWebAndCLISavesRace(t *testing.T) {
	isolate(t)
	if err := os.MkdirAll(".rally", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(".rally/settings.json", []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, base := realWeb(t)

	t.Run("a form older than a CLI save is refused", func(t *testing.T) {
		form := webForm(t, c, base)
		if _, errOut, code := runMain(t, "settings", "set", "--project", "providers.groq.maxRetries", "2"); code != 0 {
			t.Fatalf("settings set: exit %d: %s", code, errOut)
		}
		form.Set("retry.maxRetries", "7")
		code, body := webSave(t, c, base, form)
		if code != http.StatusConflict || !strings.Contains(body, `id="conflict"`) {
			t.Fatalf("stale save: %d, want the 409 conflict page", code)
		}
		if retries, providers, raw := raceFile(t); retries != nil || providers["groq"] == nil {
			t.Errorf("file after the refused save: %s", raw)
		}
	})

	names := []string{"openai", "anthropic", "openrouter"}
	var webSaved, webRefused, cliSaved, cliRefused int
	defer func() {
		t.Logf("console: %d saved, %d refused (409); settings set: %d saved, %d refused", webSaved, webRefused, cliSaved, cliRefused)
	}()
	for round := range 10 {
		if err := os.WriteFile(".rally/settings.json", []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		form := webForm(t, c, base)
		form.Set("retry.maxRetries", "7")
		var wg sync.WaitGroup
		start := make(chan struct{})
		codes, stderr := make([]int, len(names)), make([]string, len(names))
		for i, name := range names {
			wg.Go(func() {
				<-start
				_, stderr[i], codes[i] = runMain(t, "settings", "set", "--project", "providers."+name+".maxRetries", "1")
			})
		}
		var webCode int
		var webBody string
		wg.Go(func() {
			<-start
			webCode, webBody = webSave(t, c, base, form)
		})
		close(start)
		wg.Wait()
		retries, providers, raw := raceFile(t)
		switch webCode {
		case http.StatusSeeOther:
			webSaved++
			if string(retries) != "7" {
				t.Errorf("round %d: the console said saved, but the file lost its value: %s", round, raw)
			}
		case http.StatusConflict:
			webRefused++
			if !strings.Contains(webBody, `id="conflict"`) {
				t.Errorf("round %d: 409 without the conflict banner", round)
			}
		default:
			t.Errorf("round %d: console save: %d", round, webCode)
		}
		for i, name := range names {
			if codes[i] == 0 {
				cliSaved++
			} else {
				cliRefused++
			}
			switch {
			case codes[i] == 0 && providers[name] == nil:
				t.Errorf("round %d: settings set %s exited 0, but the file lost it: %s", round, name, raw)
			case codes[i] != 0 && !strings.Contains(stderr[i], "changed on disk"):
				t.Errorf("round %d: settings set %s: exit %d, %q; want a changed-on-disk error", round, name, codes[i], stderr[i])
			}
		}
	}
}
