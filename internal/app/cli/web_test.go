package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

func TestWebRefusesNonLoopback(t *testing.T) {
	isolate(t)
	_, errOut, code := run(t, "", "web", "--listen", "0.0.0.0:7878")
	if code != 2 || !strings.Contains(errOut, `web: listen "0.0.0.0:7878": not a loopback address; the console serves this machine only (use 127.0.0.1 or [::1])`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestWebServesThisProject runs a prompt against a fake provider that
// fails once, then rally web in the same directory, opens the printed
// address and finds the session with its retry on the timeline.
func TestWebServesThisProject(t *testing.T) {
	home := isolate(t)
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retry": {"baseDelayMs": 300}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "", "--preset", "flaky", "-p", "What does rally do?"); code != 0 {
		t.Fatalf("prompt: exit %d: %s", code, errOut)
	}
	c, addr := startWeb(t)
	resp, err := c.Get(addr + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	link := regexp.MustCompile(`<a href="[^"]*(/sessions/[^"]+)">What does rally do\?</a>`).FindSubmatch(body)
	if link == nil || !strings.Contains(string(body), `<td class="n"><b>1</b></td>`) {
		t.Fatalf("sessions page lacks the session and its retry:\n%s", body)
	}
	resp, err = c.Get(addr + string(link[1]))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	// One red bar, one wait of about the configured 300 ms.
	if n := strings.Count(page, `<rect class="call failed"`); n != 1 {
		t.Errorf("%d failed bars, want 1", n)
	}
	waits := regexp.MustCompile(`<text class="wait-label"[^>]*>wait (\d+)ms</text>`).FindAllStringSubmatch(page, -1)
	if len(waits) != 1 {
		t.Fatalf("wait labels %q, want one in milliseconds", waits)
	}
	if ms, _ := strconv.Atoi(waits[0][1]); ms < 280 || ms > 2000 {
		t.Errorf("wait of %d ms, want about 300", ms)
	}
	if !strings.Contains(page, `<b class="class">transient</b>`) {
		t.Error("the failure's class is not shown")
	}
}

// startWeb runs rally web in this directory on a free port, visits the
// printed URL (which must be the README's) and returns a client holding
// the token's cookie and the console's address.
func startWeb(t *testing.T) (*http.Client, string) {
	t.Helper()
	pr, pw := io.Pipe()
	cmd := newWebCmd(streams{in: strings.NewReader(""), out: pw, err: io.Discard})
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("rally web: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	// The README shows this line.
	m := regexp.MustCompile(`^rally web: open (http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]{48}\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	base := strings.TrimSpace(strings.TrimPrefix(line, "rally web: open "))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if resp, err := http.Get(m[1] + "/sessions"); err != nil || resp.StatusCode != 401 {
		t.Fatalf("without the token: %v %v", resp, err)
	}
	resp, err := c.Get(base)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("printed URL: %v %v", resp, err)
	}
	resp.Body.Close()
	// The pages live under the console's secret path, where the visit
	// landed (/c/<random>/settings).
	return c, m[1] + strings.TrimSuffix(resp.Request.URL.Path, "/settings")
}

// TestWebHidesStoredKeys: rally web hands the console the keys rally
// knows, so a stored key of no well-known shape in a session file (one
// written before rally redacted them) never shows.
func TestWebHidesStoredKeys(t *testing.T) {
	home := isolate(t)
	const key = "zzSECRETRALLYKEY0000999"
	if _, errOut, code := run(t, key, "auth", "add", "acme", "--id", "one", "--key", "-"); code != 0 {
		t.Fatalf("auth add: %s", errOut)
	}
	cwd, _ := os.Getwd()
	j, err := journal.Create(journal.Dir(home, cwd), cwd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendMessage(llm.Message{Role: llm.User, Content: []llm.Content{llm.Text("my key is " + key)}}, false); err != nil {
		t.Fatal(err)
	}
	j.Close()
	c, addr := startWeb(t)
	for _, path := range []string{"/sessions", "/sessions/" + filepath.Base(j.Path())} {
		resp, err := c.Get(addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(body), key[:12]) || !strings.Contains(string(body), "my key is [redacted]") {
			t.Errorf("%s: status %d, the key shows or is not redacted", path, resp.StatusCode)
		}
	}
}
