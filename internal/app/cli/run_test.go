package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestMain lets the test binary act as the rally command, so tests can run
// it as a real child process (and kill it).
func TestMain(m *testing.M) {
	if n, prompts, ok := sessionsEnv(os.Getenv("RALLY_TEST_SESSIONS")); ok && os.Getenv("RALLY_TEST_AS_MAIN") == "1" {
		os.Exit(fleetSessions(n, prompts, os.Args[1:])) // TestFleetBudget's child
	}
	if os.Getenv("RALLY_TEST_AS_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// isolate gives the test its own RALLY_HOME and working directory, and no
// provider keys, so runs land on sim unless told otherwise.
func isolate(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("RALLY_HOME", home)
	for _, k := range []string{"RALLY_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Chdir(t.TempDir())
	return home
}

func sessionFiles(t *testing.T, home string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
	return files
}

func TestPrintModeOnSim(t *testing.T) {
	home := isolate(t)
	out, errOut, code := run(t, "", "-p", "What does rally do?")
	if code != 0 || !strings.Contains(out, "survive provider failures") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if n := len(sessionFiles(t, home)); n != 1 {
		t.Errorf("%d session files, want 1", n)
	}
	// --continue resumes it: the second prompt sees the first exchange.
	if _, errOut, code := run(t, "", "--continue", "-p", "and then?"); code != 0 {
		t.Fatalf("continue: exit %d: %s", code, errOut)
	}
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("continue made %d files", len(files))
	}
	loaded, err := journal.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Messages) != 4 {
		t.Errorf("resumed session has %d messages, want 4", len(loaded.Messages))
	}
	// --no-session writes nothing.
	run(t, "", "--no-session", "-p", "hello")
	if n := len(sessionFiles(t, home)); n != 1 {
		t.Errorf("--no-session wrote a file (%d files)", n)
	}
}

func TestPrintModePresetRetries(t *testing.T) {
	isolate(t)
	// A project settings file makes the demo's waits tiny.
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"baseDelayMs":5}}`), 0o644)
	out, errOut, code := run(t, "", "--preset", "flaky", "-p", "What does rally do?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "retrying (1/3) in 5ms: ") || !strings.Contains(out, "survive provider failures") {
		t.Errorf("stdout %q\nstderr %q", out, errOut)
	}
	// Into a pipe a dropped stream's partial answer is never written.
	out, errOut, code = run(t, "", "--preset", "midstream-drop", "-p", "What does rally do?")
	if code != 0 || strings.Count(out, "rally runs LLM agent sessions") != 1 {
		t.Errorf("midstream-drop: exit %d, answer %d times\n%q\n%s", code, strings.Count(out, "rally runs"), out, errOut)
	}
}

func TestPrintModeFailures(t *testing.T) {
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Auth})
	_, errOut, code := run(t, "", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "hi")
	if code != 1 || !strings.Contains(errOut, "401") {
		t.Errorf("auth failure: exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests for a fatal error, want 1", n)
	}
	_, errOut, code = run(t, "", "--mode", "yaml", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, "--mode must be") {
		t.Errorf("bad mode: exit %d, %q", code, errOut)
	}
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"maxRetries":"three"}}`), 0o644)
	_, errOut, code = run(t, "", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, "retry.maxRetries") {
		t.Errorf("invalid settings: exit %d, %q", code, errOut)
	}
}

func TestMaxTurns(t *testing.T) {
	isolate(t)
	call := llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: `{"command":"true"}`}}}
	srv := llmtest.NewServer(t, call)
	_, errOut, code := run(t, "", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "--max-turns", "2", "-p", "loop")
	if code != 1 || !strings.Contains(errOut, "maximum number of turns (2)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}

func TestJSONMode(t *testing.T) {
	isolate(t)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"baseDelayMs":1}}`), 0o644)
	out, errOut, code := run(t, "", "--mode", "json", "--preset", "overloaded", "-p", "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		types = append(types, e["type"].(string))
	}
	joined := strings.Join(types, " ")
	for _, want := range []string{"agent_start", "auto_retry_start", "auto_retry_end", "message_update", "agent_settled"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s event in %s", want, joined)
		}
	}
	if types[len(types)-1] != "agent_settled" {
		t.Errorf("last event %s", types[len(types)-1])
	}
}

// TestCrashLosesNothing kills rally with SIGKILL while it streams its
// second answer and checks that everything message_end had written is in
// the session file.
func TestCrashLosesNothing(t *testing.T) {
	home := isolate(t)
	srv := llmtest.NewServer(t,
		llmtest.Step{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: `{"command":"echo crash-test"}`}}},
		llmtest.Step{Fault: llmtest.Stall, After: 2, Text: "this answer never ends"},
	)
	cmd := exec.Command(os.Args[0], "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "go")
	startUntilCalls(t, cmd, srv, 2)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	loaded, err := journal.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var roles []llm.Role
	for _, m := range loaded.Messages {
		roles = append(roles, m.Role)
	}
	if len(roles) != 3 || roles[0] != llm.User || roles[1] != llm.Assistant || roles[2] != llm.ToolResult {
		t.Fatalf("after the crash the session holds %v, want user, assistant, toolResult", roles)
	}
	if !strings.Contains(loaded.Messages[2].TextOf(), "crash-test") {
		t.Errorf("tool result %q", loaded.Messages[2].TextOf())
	}
}

// TestKeyNeverLeaks echoes the key in a provider error and greps every
// output rally writes for it.
func TestKeyNeverLeaks(t *testing.T) {
	home := isolate(t)
	const key = "sk-live-SECRETSECRETSECRET1234"
	t.Setenv("RALLY_API_KEY", key)
	body := `{"error":{"message":"Incorrect API key provided: ` + key + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Status: 503, Body: `{"error":{"message":"upstream said ` + key + `","type":"server_error"}}`},
		llmtest.Step{Fault: llmtest.HTTPError, Status: 401, Body: body})
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retry":{"baseDelayMs":1}}`), 0o644)
	out, errOut, code := run(t, "", "--mode", "json", "--verbose", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "hi")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	texts := map[string]string{"stdout": out, "stderr": errOut}
	for _, f := range append(sessionFiles(t, home), filepath.Join(home, "logs", "rally.log")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	for name, text := range texts {
		if strings.Contains(text, "SECRETSECRET") {
			t.Errorf("the key leaked into %s", name)
		}
	}
	if !strings.Contains(texts[filepath.Join(home, "logs", "rally.log")], "retry decision") {
		t.Errorf("rally.log has no retry decision")
	}
}

// startUntilCalls starts cmd as the rally command and waits until it has
// made n calls to srv.
func startUntilCalls(t *testing.T, cmd *exec.Cmd, srv *llmtest.Server, n int) {
	t.Helper()
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(srv.Requests()) < n {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("rally made %d model calls, want %d", len(srv.Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
