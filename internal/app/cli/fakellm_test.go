package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/rally-agent/rally/internal/proctest"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// syncBuffer is an output the test reads while it is written.
type syncBuffer = proctest.Buffer

// startFakeLLM runs the command in-process until the returned stop is
// called, and returns the URL it printed.
func startFakeLLM(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func() error) {
	t.Helper()
	pr, pw := io.Pipe()
	stderr = &syncBuffer{}
	cmd := newFakeLLMCmd(streams{in: strings.NewReader(""), out: pw, err: stderr})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no first line: %v (command: %v, stderr %q)", err, <-done, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	const prefix = "fake-llm listening on "
	if !strings.HasPrefix(line, prefix) {
		cancel()
		t.Fatalf("first line %q", line)
	}
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			// A guard against a hang, not a timing assumption.
			t.Fatal("fake-llm did not stop")
			return nil
		}
	}
	return strings.TrimSpace(strings.TrimPrefix(line, prefix)), stderr, stop
}

func TestFakeLLMCommand(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	url, stderr, stop := startFakeLLM(t, "--listen", "127.0.0.1:0", "--preset", "flaky", "--log", logPath)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	const key = "sk-ant-api03-CLISECRETKEY777"
	status := func() int {
		req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", key)
		req.Header.Set("x-rally-attempt", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 200 && !strings.Contains(string(b), "event: message_stop") {
			t.Errorf("reply:\n%s", b)
		}
		return resp.StatusCode
	}
	if a, b := status(), status(); a != 503 || b != 200 {
		t.Errorf("flaky: %d then %d", a, b)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if e := stderr.String(); !strings.Contains(e, "-> http 503") || !strings.Contains(e, "-> ok") || !strings.Contains(e, "served 2 requests") {
		t.Errorf("stderr:\n%s", e)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(log, []byte("CLISECRET")) {
		t.Fatalf("key in the log:\n%s", log)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s", log)
	}
	var rec struct {
		Outcome, Credential, Model, Attempt, API string
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.Outcome != "http 503" || rec.Credential != "sk-…Y777" || rec.Model != "claude-x" || rec.Attempt != "1" || rec.API != "anthropic-messages" {
		t.Errorf("log line %s: %v", lines[0], err)
	}
}

// Stopping with a stalled client connected must not hang.
func TestFakeLLMStopsWithStalledClient(t *testing.T) {
	url, _, stop := startFakeLLM(t, "--preset", "stall")
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stalled stream ended cleanly; want it cut")
	}
}

func TestFakeLLMReplay(t *testing.T) {
	dir := t.TempDir()
	body := "data: {\"x\":1}\r\n\r\ndata: [DONE]\r\n\r\n"
	p := filepath.Join(dir, "t.sse")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _, stop := startFakeLLM(t, "--replay", p, "--status", "201")
	defer stop()
	resp, err := http.Get(url + "/whatever")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(b) != body {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}

func TestFakeLLMRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"--listen", ":0"}, "not a loopback"},
		{[]string{"--listen", "192.0.2.1:0"}, "not a loopback"},
		{[]string{"--preset", "flaky", "--script", "x.json"}, "one of --preset"},
		{[]string{"--preset", "nope"}, "no preset \"nope\""},
		{[]string{"--status", "503"}, "--status goes with --replay"},
		{[]string{"--upstream", "ftp://x"}, "want an http(s) URL"},
		{[]string{"--script", "/does/not/exist.json"}, "exist.json"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"fake-llm"}, c.args...), strings.NewReader(""), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, code, errb.String(), out.String())
		}
	}
}

func TestFakeLLMHelp(t *testing.T) {
	out, _, code := run(t, "", "fake-llm", "--help")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--upstream") || !strings.Contains(out, "midstream-drop") {
		t.Errorf("help:\n%s", out)
	}
}
