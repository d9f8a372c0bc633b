package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// TestBeforeOutputCountsWhatWasSeen: with retry.streaming beforeOutput, a
// stream that drops after some text is retried when nobody saw the text
// (print mode into a pipe writes an answer once it is whole) and not when
// a client did (--mode json streams every delta).
func TestBeforeOutputCountsWhatWasSeen(t *testing.T) {
	cases := []struct {
		mode     string
		code     int
		requests int
	}{
		{"text", 0, 2},
		{"json", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			isolate(t)
			writeProjectSettings(t, `{"retry":{"streaming":"beforeOutput","baseDelayMs":1}}`)
			fake := newRecorded(t,
				llmtest.Step{Text: "the first half of an answer and then", Fault: llmtest.Drop, After: 3},
				llmtest.Step{Text: "The whole answer."})
			out, errOut, code := run(t, "", "--no-session", "--mode", c.mode, "--api", "openai-completions", "--base-url", fake.url+"/v1", "--model", "m", "-p", "hi")
			if code != c.code || len(fake.requests()) != c.requests {
				t.Fatalf("exit %d, %d requests; want %d, %d\nstdout %s\nstderr %s", code, len(fake.requests()), c.code, c.requests, out, errOut)
			}
			switch c.mode {
			case "text":
				if out != "The whole answer.\n" || !strings.Contains(errOut, "rally: retrying (1/3)") {
					t.Errorf("stdout %q, stderr %q", out, errOut)
				}
			case "json":
				if !strings.Contains(out, `"type":"message_update"`) || !strings.Contains(errOut, "output was already streamed") {
					t.Errorf("stdout %q, stderr %q", out, errOut)
				}
			}
		})
	}
}

// TestLoadWarningsPrinted: resuming a session whose last line a crash tore
// says so on stderr and in the log, and the resumed file is clean after.
func TestLoadWarningsPrinted(t *testing.T) {
	home := isolate(t)
	if _, errOut, code := run(t, "", "-p", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := sessionFiles(t, home)[0]
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"dead`)
	f.Close()

	_, errOut, code := run(t, "", "-c", "-p", "and then?")
	want := "rally: " + path + ": line 4: torn last line skipped"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr %q; want it to contain %q", code, errOut, want)
	}
	if log := readLog(home); !strings.Contains(log, `"msg":"session load"`) || !strings.Contains(log, "torn last line skipped") {
		t.Errorf("log lacks the warning:\n%s", log)
	}
	ld, err := journal.Load(path)
	if err != nil || len(ld.Warnings) != 0 || len(ld.Messages) != 4 {
		t.Errorf("after resuming: %v, warnings %q, %d messages", err, ld.Warnings, len(ld.Messages))
	}
}

// TestTwoWritersNeverForkASession runs two `rally -c` at once: the second
// finds the latest session in use, says so and starts a new one, so the
// first one's file stays one unbroken chain; `--session` on the busy file,
// and `rally compact` of it, are refused with exit 1.
func TestTwoWritersNeverForkASession(t *testing.T) {
	home := isolate(t)
	// The first rally holds its session open in a tool call until go exists.
	fake := newRecorded(t,
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"touch started; while [ ! -e go ]; do sleep 0.02; done; echo went"}`}}},
		llmtest.Step{Text: "first is done"})
	first, _, firstErr := rallyIn(t, home, "-c", "--api", "openai-completions", "--base-url", fake.url+"/v1", "--model", "m", "-p", "first")
	proctest.Wait(t, "the first rally's tool", func() bool { _, err := os.Stat("started"); return err == nil })
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("%d session files while the first runs", len(files))
	}
	busy := files[0]

	_, compactErr, code := run(t, "", "compact")
	if code != 1 || !strings.Contains(compactErr, "the session is open in another rally process") {
		t.Errorf("compact of a busy session: exit %d, stderr %q", code, compactErr)
	}

	second, secondOut, secondErr := rallyIn(t, home, "-c", "-p", "second")
	wait(t, second, secondErr)
	if !strings.Contains(secondErr.String(), "rally: the latest session "+busy+" is in use by another rally process; starting a new session") ||
		!strings.Contains(secondOut.String(), `You asked: "second"`) {
		t.Errorf("second -c: stdout %q, stderr %q", secondOut, secondErr)
	}
	third, _, thirdErr := rallyIn(t, home, "--session", busy, "-p", "third")
	if err := third.Wait(); third.ProcessState.ExitCode() != 1 || !strings.Contains(thirdErr.String(), "the session is open in another rally process") {
		t.Errorf("--session on a busy file: %v, stderr %q", err, thirdErr)
	}

	os.WriteFile("go", nil, 0o600)
	wait(t, first, firstErr)
	files = sessionFiles(t, home)
	if len(files) != 2 {
		t.Fatalf("%d session files, want 2", len(files))
	}
	ld, err := journal.Load(busy)
	if err != nil || len(ld.Warnings) != 0 {
		t.Fatalf("%v %q", err, ld.Warnings)
	}
	var roles []string
	for i, e := range ld.Entries {
		if i > 0 && e.ParentID != ld.Entries[i-1].ID {
			t.Errorf("entry %d (%s) forks from %s", i, e.ID, e.ParentID)
		}
		roles = append(roles, string(e.Message.Role)+":"+strings.TrimSpace(e.Message.TextOf()))
	}
	if got := strings.Join(roles, " "); got != "user:first assistant: toolResult:went assistant:first is done" {
		t.Errorf("the first session holds %s", got)
	}
	other := files[0]
	if other == busy {
		other = files[1]
	}
	if ld, err := journal.Load(other); err != nil || len(ld.Messages) != 2 || ld.Messages[0].TextOf() != "second" {
		t.Errorf("the second session: %v, %d messages", err, len(ld.Messages))
	}
}

// TestSessionFileRedactsKeys: a stored key typed into a prompt, and
// echoed in the answer, never reaches the session file; a key-shaped
// token that rally does not know is hidden too (DESIGN §4).
func TestSessionFileRedactsKeys(t *testing.T) {
	home := isolate(t)
	if _, errOut, code := run(t, testKeyA, "auth", "add", "acme", "--id", "one", "--key", "-"); code != 0 {
		t.Fatalf("auth add: %s", errOut)
	}
	const stranger = "sk-proj-STRANGERkeyZZZZ9999"
	srv := llmtest.NewServer(t, llmtest.Step{Text: "Your key " + testKeyA + " and " + stranger + " are noted."})
	prompt := "my key is " + testKeyA + " and theirs " + stranger
	_, errOut, code := run(t, "", "--provider", "acme", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", prompt)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{testKeyA, testKeyA[len(testKeyA)-12:], stranger} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the session file holds the secret ending %q", secret[len(secret)-4:])
		}
	}
	if n := strings.Count(string(b), "[redacted]"); n != 4 {
		t.Errorf("%d [redacted] in the session file, want 4", n)
	}
	loaded, err := journal.Load(files[0])
	if err != nil || len(loaded.Messages) != 2 || !strings.Contains(loaded.Messages[0].TextOf(), "my key is [redacted]") {
		t.Fatalf("the redacted file does not load as the session (%v)", err)
	}
}
