package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
)

func TestWebRefusesNonLoopback(t *testing.T) {
	isolate(t)
	_, errOut, code := run(t, "", "web", "--listen", "0.0.0.0:7878")
	if code != 2 || !strings.Contains(errOut, `web: listen "0.0.0.0:7878": not a loopback address; the console serves this machine only (use 127.0.0.1 or [::1])`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestWebServesThisProject runs a prompt, then rally web in the same
// directory, opens the printed address and finds the session.
func TestWebServesThisProject(t *testing.T) {
	isolate(t)
	if _, errOut, code := run(t, "", "-p", "What does rally do?"); code != 0 {
		t.Fatalf("prompt: exit %d: %s", code, errOut)
	}
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
	resp, err = c.Get(m[1] + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), ">What does rally do?</a>") || !strings.Contains(string(body), "sim/sim") {
		t.Errorf("sessions page lacks the session:\n%s", body)
	}
}
