//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
)

// hookScript writes an executable shell script (the user's hook program)
// to a temp folder; $D in it is that folder.
func hookScript(t *testing.T, body string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "hook.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nD="+dir+"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

func projectSettings(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(".rally", 0o755)
	if err := os.WriteFile(".rally/settings.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type obj = map[string]any

// jsonLines returns the stdout lines of --mode json whose type is typ.
func jsonLines(out, typ string) []string {
	var lines []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, `"type":"`+typ+`"`) && strings.HasSuffix(strings.TrimSuffix(line, "\n"), `"type":"`+typ+`"}`) {
			lines = append(lines, line)
		}
	}
	return lines
}

// TestHookReceivesTheEventLine: a hook on auto_retry_end gets exactly the
// line --mode json prints for it, for a chain that succeeds and one that
// fails, with the session's id and file in its environment; a hook on
// several types sees them in the order of the stream.
func TestHookReceivesTheEventLine(t *testing.T) {
	home := isolate(t)
	capture, dir := hookScript(t, `cat >> "$D/events"; echo "$RALLY_EVENT $RALLY_SESSION_ID $RALLY_SESSION_FILE" >> "$D/env"`)
	order, odir := hookScript(t, `echo "$RALLY_EVENT" >> "$D/order"`)
	projectSettings(t, obj{
		"retry": obj{"baseDelayMs": 1, "maxRetries": 1},
		"hooks": []obj{
			{"on": []string{"auto_retry_end"}, "command": []string{capture}},
			{"on": []string{"agent_start", "auto_retry_start", "auto_retry_end", "agent_end", "agent_settled"}, "command": []string{order}},
		},
	})
	overloaded := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}
	srv := llmtest.NewServer(t, overloaded, llmtest.Step{Text: "fine"}, overloaded, overloaded)
	args := []string{"--mode", "json", "--continue", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m", "-p"}
	var printed []string
	var all string
	for i, want := range []int{0, 1} { // a chain that succeeds, then one that fails
		out, errOut, code := run(t, "", append(args, "go")...)
		if code != want {
			t.Fatalf("prompt %d: exit %d: %s", i, code, errOut)
		}
		printed = append(printed, jsonLines(out, "auto_retry_end")...)
		all += out
	}
	got, _ := os.ReadFile(filepath.Join(dir, "events"))
	if len(printed) != 2 || string(got) != strings.Join(printed, "") {
		t.Errorf("the hook got\n%s\n--mode json printed\n%s", got, strings.Join(printed, ""))
	}
	if !strings.Contains(printed[1], `"success":false`) {
		t.Errorf("the second chain did not fail: %s", printed[1])
	}

	files := sessionFiles(t, home)
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	var header struct{ ID string }
	b, _ := os.ReadFile(files[0])
	json.Unmarshal(b[:bytes.IndexByte(b, '\n')], &header)
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	if want := "auto_retry_end " + header.ID + " " + files[0] + "\n"; header.ID == "" || string(env) != want+want {
		t.Errorf("hook environment\n%s\nwant twice %s", env, want)
	}

	var stream []string
	for line := range strings.Lines(all) {
		var e struct{ Type string }
		json.Unmarshal([]byte(line), &e)
		switch e.Type {
		case "agent_start", "auto_retry_start", "auto_retry_end", "agent_end", "agent_settled":
			stream = append(stream, e.Type)
		}
	}
	seen, _ := os.ReadFile(filepath.Join(odir, "order"))
	if want := strings.Join(stream, "\n") + "\n"; string(seen) != want {
		t.Errorf("the hook saw\n%s\nthe stream had\n%s", seen, want)
	}
}

// TestHangingHookDoesNotDelayTheRun: a hook that sleeps 5 times its
// timeout on auto_retry_start is still running when the retried prompt
// has settled, and is killed at its timeout, which is when rally exits.
// The answer is 1500 deltas, more than a session buffers for one
// subscriber, so a runner that waited for its hook would stall the stream
// itself. The timeout starts at 2 s; a machine too loaded to settle the
// prompt within it cannot tell, so the run is repeated with the timeout
// doubled (up to 16 s) rather than failing on the machine's speed.
func TestHangingHookDoesNotDelayTheRun(t *testing.T) {
	for timeout := 2 * time.Second; ; timeout *= 2 {
		if hangingHookRun(t, timeout) || t.Failed() {
			return
		}
		if timeout >= 16*time.Second {
			t.Fatalf("the prompt never settled within the hook's timeout (up to %s)", timeout)
		}
		t.Logf("the prompt took longer than the hook's %s timeout; again with %s", timeout, 2*timeout)
	}
}

// hangingHookRun is one run of TestHangingHookDoesNotDelayTheRun; it
// reports false, checking nothing more, when the hook's timeout came
// before the prompt settled.
func hangingHookRun(t *testing.T, timeout time.Duration) bool {
	home := isolate(t)
	sleep := 5 * timeout
	slow, dir := hookScript(t, fmt.Sprintf(`echo $$ > "$D/pid"; sleep %g`, sleep.Seconds()))
	projectSettings(t, obj{
		"retry":        obj{"baseDelayMs": 1},
		"hooksGraceMs": 60000,
		"hooks":        []obj{{"on": []string{"auto_retry_start"}, "command": []string{slow}, "timeoutMs": timeout.Milliseconds()}},
	})
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: strings.Repeat("fine ", 1500)})
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	begin := time.Now()
	go func() {
		done <- Main([]string{"--mode", "json", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m", "-p", "go"}, strings.NewReader(""), pw, &errOut)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), `"type":"agent_settled"`) {
	}
	// The prompt has settled: its retry and answer did not wait for the hook.
	pid := proctest.Pid(t, filepath.Join(dir, "pid"))
	alive, timedOut := proctest.Alive(pid), strings.Contains(readLog(home), "killed at its timeout")
	// The hook started after begin, so its timeout cannot have come
	// before this point unless a whole timeout has passed since begin.
	tooSlow := time.Since(begin) >= timeout
	io.Copy(io.Discard, pr)
	code := <-done
	if tooSlow {
		return false
	}
	if !alive {
		t.Fatal("the hook was no longer running when the prompt settled")
	}
	if timedOut {
		t.Fatal("the hook's timeout came before the prompt settled")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if took := time.Since(begin); took >= sleep {
		t.Errorf("rally took %v: the hook was not killed at its %s timeout", took, timeout)
	}
	if proctest.Alive(pid) {
		t.Error("the hook outlived its timeout")
	}
	killed := fmt.Sprintf("killed at its timeout (%s)", timeout)
	if !strings.Contains(readLog(home), killed) || !strings.Contains(errOut.String(), "on auto_retry_start: "+killed) {
		t.Errorf("log:\n%s\nstderr:\n%s", readLog(home), errOut.String())
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	return true
}

// TestFailingHookNeverFailsThePrompt: a hook that exits 1 is logged and
// named once on stderr; the answer is printed and rally exits 0.
func TestFailingHookNeverFailsThePrompt(t *testing.T) {
	home := isolate(t)
	failing, _ := hookScript(t, `echo "no chat server" >&2; exit 1`)
	projectSettings(t, obj{"hooks": []obj{{"on": []string{"message_end", "agent_settled"}, "command": []string{failing}}}})
	out, errOut, code := run(t, "", "-p", "What does rally do?")
	if code != 0 || !strings.Contains(out, "survive provider failures") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	// message_end twice (user, assistant), agent_settled once: three
	// failures, the first named.
	want := "rally: hook hooks[0] (" + failing + ") on message_end: exit status 1\nrally: 3 hook failure(s) in all; the log has each one\n"
	if errOut != want {
		t.Errorf("stderr %q\nwant   %q", errOut, want)
	}
	if log := readLog(home); strings.Count(log, "no chat server") != 3 {
		t.Errorf("log:\n%s", log)
	}
}

// TestExitGrace: at exit rally waits for a hanging hook only the grace,
// then kills it and says so in the log.
func TestExitGrace(t *testing.T) {
	home := isolate(t)
	hang, dir := hookScript(t, `echo $$ > "$D/pid"; sleep 10`)
	projectSettings(t, obj{
		"hooksGraceMs": 300,
		"hooks":        []obj{{"on": []string{"agent_settled"}, "command": []string{hang}, "timeoutMs": 60000}},
	})
	begin := time.Now()
	_, errOut, code := run(t, "", "-p", "hi")
	took := time.Since(begin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if took >= 10*time.Second {
		t.Errorf("rally took %v to exit with a 300ms grace", took)
	}
	if pid := proctest.Pid(t, filepath.Join(dir, "pid")); proctest.Alive(pid) {
		t.Error("the hook outlived rally")
	}
	if log := readLog(home); !strings.Contains(log, "hooks: killed at exit after the 300ms grace: 1 running hook(s) killed, 0 queued event(s) dropped") {
		t.Errorf("log:\n%s", log)
	}
}

// TestHookDiesWithRally: a hook still running when rally is SIGKILLed is
// killed by the kernel (Pdeathsig), not left behind.
func TestHookDiesWithRally(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	isolate(t)
	hang, dir := hookScript(t, `echo $$ > "$D/pid"; sleep 30`)
	projectSettings(t, obj{"hooks": []obj{{"on": []string{"agent_settled"}, "command": []string{hang}, "timeoutMs": 60000}}})
	p := startRPC(t)
	p.call("p", `{"type":"prompt","message":"hi"}`)
	pid := proctest.Pid(t, filepath.Join(dir, "pid"))
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.exited(10 * time.Second)
	proctest.Dead(t, pid) // the hook dies with rally
}

// TestRPCHooksFollowNewSession: in RPC mode hooks run for every session,
// with its own id, and their output never reaches stdout.
func TestRPCHooksFollowNewSession(t *testing.T) {
	isolate(t)
	h, dir := hookScript(t, `echo "$RALLY_SESSION_ID" >> "$D/ids"; echo "hook noise on stdout"`)
	projectSettings(t, obj{"hooks": []obj{{"on": []string{"agent_settled"}, "command": []string{h}}}})
	p := startRPC(t)
	var ids []string
	for i := range 2 {
		if i == 1 {
			p.call("n", `{"type":"new_session"}`)
		}
		p.call("p"+strconv.Itoa(i), `{"type":"prompt","message":"hi"}`)
		p.event("agent_settled")
		st := p.call("s"+strconv.Itoa(i), `{"type":"get_state"}`)
		ids = append(ids, st["data"].(map[string]any)["sessionId"].(string))
	}
	proctest.Wait(t, "two hook runs", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "ids"))
		return strings.Count(string(b), "\n") == 2
	})
	p.in.Close()
	if !p.exited(10 * time.Second) {
		t.Fatal("rally did not exit")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ids"))
	if ids[0] == ids[1] || string(b) != ids[0]+"\n"+ids[1]+"\n" {
		t.Errorf("the hook saw sessions %q, get_state said %q", b, ids)
	}
}

// TestHooksTestCommand: rally hooks test runs the hooks of one event with
// its sample, without key variables (a provider's, auth.json's keyEnv, a
// copy of a key under another name), prints each run with the end of its
// output (keys redacted) and exits 1 when one failed.
func TestHooksTestCommand(t *testing.T) {
	isolate(t)
	t.Setenv("OPENAI_API_KEY", "sk-test-NOTINHOOKS")
	t.Setenv("TEAM_OPENAI_KEY", "sk-team-NOTINHOOKS")
	t.Setenv("COPY_OF_A_KEY", "sk-team-NOTINHOOKS")
	if _, errOut, code := run(t, "", "auth", "add", "openai", "--id", "team", "--key-env", "TEAM_OPENAI_KEY"); code != 0 {
		t.Fatal(errOut)
	}
	ok, _ := hookScript(t, `cat; echo; echo "key variables: $(env | grep -c 'NOTINHOOKS')" >&2`)
	bad, _ := hookScript(t, `echo "cannot reach the chat server" >&2; echo "a key it found: sk-team-NOTINHOOKS" >&2; exit 3`)
	projectSettings(t, obj{"hooks": []obj{
		{"on": []string{"auto_retry_end"}, "command": []string{ok, "with space"}},
		{"on": []string{"agent_settled"}, "command": []string{"true"}},
		{"on": []string{"auto_retry_end"}, "command": []string{bad}},
	}})
	out, errOut, code := run(t, "", "hooks", "test", "auto_retry_end")
	event := `{"attempt":3,"finalError":"529 overloaded_error: Overloaded","success":false,"type":"auto_retry_end"}`
	want := "event: " + event + "\n" +
		"hooks[0] " + ok + " 'with space': exit 0 in XXms\n" +
		"  stdout:\n    " + event + "\n" +
		"  stderr:\n    key variables: 0\n" +
		"hooks[2] " + bad + ": failed: exit status 3 in XXms\n" +
		"  stderr:\n    cannot reach the chat server\n    a key it found: [redacted]\n"
	// A hook's duration is printed as Go prints a duration ("12ms", or
	// "3.4s" on a loaded machine): the test masks it whatever it is, so
	// it does not depend on how fast the machine ran the hooks.
	if got := regexp.MustCompile(`in (\d+(\.\d+)?(ms|s)|\dm[0-9.]+s)\n`).ReplaceAllString(out, "in XXms\n"); got != want || code != 1 {
		t.Errorf("exit %d\ngot\n%s\nwant\n%s", code, got, want)
	}
	if errOut != "rally: hooks test: 1 of 2 hook(s) failed\n" {
		t.Errorf("stderr %q", errOut)
	}
	out, _, code = run(t, "", "hooks", "test", "turn_start")
	if code != 0 || !strings.HasSuffix(out, "no hook runs on turn_start\n") {
		t.Errorf("exit %d: %q", code, out)
	}
	for _, args := range [][]string{{"hooks", "test"}, {"hooks", "test", "a", "b"}, {"hooks", "tset"}} {
		if _, errOut, code := run(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
	_, errOut, code = run(t, "", "hooks", "test", "agent_ended")
	if code != 2 || !strings.Contains(errOut, `unknown event type "agent_ended" (one of agent_start,`) {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

func TestUnknownHookEventIsASettingsError(t *testing.T) {
	isolate(t)
	projectSettings(t, obj{"hooks": []obj{{"on": []string{"retry_failed"}, "command": []string{"true"}}}})
	_, errOut, code := run(t, "", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, `hooks[0].on[0]: must be one of "agent_start"`) || !strings.Contains(errOut, `got "retry_failed"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func readLog(home string) string {
	b, _ := os.ReadFile(filepath.Join(home, "logs", "rally.log"))
	return string(b)
}
