package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// These tests run the real rally binary in a real terminal (tmux) against
// the fake LLM over loopback, and read the screen.

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// rallyBinary builds cmd/rally once per test run.
func rallyBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "rally-tui-test"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rally")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/rally-agent/rally/cmd/rally").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// needTmux skips without tmux, except in CI, where it fails.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is required in CI (apt-get install -y tmux)")
		}
		t.Skip("tmux not installed")
	}
}

// pane is rally running in a tmux session of its own server.
type pane struct {
	t         *testing.T
	sock, dir string
}

// startRally runs rally with args in a w×h terminal, pointed at srv (nil:
// args say which model), with
// a fresh RALLY_HOME holding settings (JSON, may be "").
func startRally(t *testing.T, srv *llmtest.Server, w, h int, settings string, args ...string) *pane {
	t.Helper()
	return startRallyIn(t, t.TempDir(), srv, w, h, settings, args...)
}

// startRallyIn is startRally in dir, with RALLY_HOME dir/home.
func startRallyIn(t *testing.T, dir string, srv *llmtest.Server, w, h int, settings string, args ...string) *pane {
	t.Helper()
	return startRallyEnv(t, dir, nil, srv, w, h, settings, args...)
}

// startRallyEnv is startRallyIn with env (NAME=value) added to rally's
// environment.
func startRallyEnv(t *testing.T, dir string, env []string, srv *llmtest.Server, w, h int, settings string, args ...string) *pane {
	t.Helper()
	needTmux(t)
	bin := rallyBinary(t)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if settings != "" {
		if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &pane{t: t, sock: filepath.Join(dir, "tmux.sock"), dir: dir}
	argv := append(append([]string{"env", "RALLY_HOME=" + home, "HOME=" + home, "NO_COLOR=1"}, env...), bin)
	if srv != nil {
		argv = append(argv, fakeFlags(srv)...)
	}
	if !slices.Contains(args, "--session") && !slices.Contains(args, "--continue") {
		argv = append(argv, "--no-session")
	}
	argv = append(argv, args...)
	// After rally exits, the shell records its exit status and the
	// terminal's modes (TestTmuxQuit), and keeps the pane open.
	script := `"$@"; echo "exit $?" > exit.txt; stty -a >> exit.txt; exec sleep 600`
	tm := append([]string{"new-session", "-d", "-s", "rally", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir, "sh", "-c", script, "sh"}, argv...)
	p.tmux(tm...)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	p.waitFor("the editor", func(s string) bool { return strings.Contains(s, "Type a prompt") || strings.Contains(s, "› ") })
	return p
}

// fakeFlags point rally at srv.
func fakeFlags(srv *llmtest.Server) []string {
	return []string{"--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "fake-model"}
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the visible pane, trailing blanks removed.
func (p *pane) screen() string {
	p.t.Helper()
	lines := strings.Split(p.tmux("capture-pane", "-p", "-t", "rally"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// waitFor polls the screen until ok holds on two captures in a row that
// are the same (so a frame caught half drawn does not count), for at most
// 15 s, and returns that screen.
func (p *pane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var s, prev string
	for time.Now().Before(deadline) {
		if s = p.screen(); s == prev && ok(s) {
			return s
		}
		prev = s
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
	return ""
}

func (p *pane) waitText(text string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

func (p *pane) keys(keys ...string) { p.tmux(append([]string{"send-keys", "-t", "rally"}, keys...)...) }

func (p *pane) typeLine(text string) {
	p.tmux("send-keys", "-t", "rally", "-l", text)
	p.keys("Enter")
}

// waitExit waits for rally to exit and returns what the pane's shell
// recorded: "exit N" and the terminal's modes.
func (p *pane) waitExit() string {
	p.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(p.dir, "exit.txt")); err == nil && strings.Contains(string(b), "speed") {
			return string(b)
		}
	}
	p.t.Fatalf("rally did not exit; screen:\n%s", p.screen())
	return ""
}

// idle reports a screen with no run going.
func idle(s string) bool {
	return strings.Contains(s, "· idle") && !strings.Contains(s, "Working…")
}

var loaderRE = regexp.MustCompile(`Retrying \(1/3\) in (\d)s… \(esc to cancel\)`)

func TestTmuxRetryCancelThenSucceed(t *testing.T) {
	answer := "The answer is forty-two, and it arrived after one retry."
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.HTTPError, Status: 503},
		llmtest.Step{Fault: llmtest.HTTPError, Status: 503},
		// Usage given, so the status line does not depend on the prompt size.
		llmtest.Step{Text: answer, Delay: 5 * time.Millisecond, Usage: &llmtest.Usage{Input: 1200, Output: 34}},
	)
	p := startRally(t, srv, 80, 24, `{"retry":{"baseDelayMs":2000}}`)

	p.typeLine("What does rally do?")
	loader := p.waitText("Retrying (1/3) in 2s… (esc to cancel)")
	shown := time.Now()
	golden(t, "readme-loader", strings.TrimLeft(loader, "\n"))
	// The countdown is live: the seconds change while we watch.
	p.waitText("Retrying (1/3) in 1s… (esc to cancel)")
	p.keys("Escape")
	s := p.waitText("Retry cancelled")
	if loaderRE.MatchString(s) {
		t.Fatalf("the loader stayed after the cancel:\n%s", s)
	}
	// The wait would have ended 2 s after the loader showed; nothing may
	// reach the fake LLM by then (or a while after).
	for time.Since(shown) < 3*time.Second {
		if n := len(srv.Requests()); n != 1 {
			t.Fatalf("%d requests after the cancel, want 1", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.waitFor("idle after the cancel", idle)

	p.typeLine("And once more?")
	p.waitText("Retrying (1/3) in")
	s = p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "forty-two") && idle(s) })
	if n := strings.Count(s, "The answer is forty-two"); n != 1 {
		t.Fatalf("the answer shows %d times:\n%s", n, s)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	golden(t, "readme-session", strings.TrimLeft(s, "\n"))
}

func TestTmuxMidstreamDrop(t *testing.T) {
	text := "Alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november."
	srv := llmtest.NewServer(t,
		llmtest.Step{Fault: llmtest.Drop, After: 4, Text: text, Chunks: 14, Delay: 40 * time.Millisecond},
		llmtest.Step{Text: text, Chunks: 14, Delay: 5 * time.Millisecond},
	)
	p := startRally(t, srv, 80, 24, `{"retry":{"baseDelayMs":200}}`, "Tell me the alphabet")
	s := p.waitFor("the full answer", func(s string) bool { return strings.Contains(s, "november.") && idle(s) })
	if n := strings.Count(s, "Alpha bravo"); n != 1 {
		t.Fatalf("the answer's start shows %d times:\n%s", n, s)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestTmuxResizeRewraps(t *testing.T) {
	words := strings.Fields(strings.Repeat("resizing the terminal re-wraps every line of the transcript ", 5))
	answer := strings.Join(words, " ")
	srv := llmtest.NewServer(t, llmtest.Step{Text: answer})
	p := startRally(t, srv, 100, 30, "", "Wrap this please")
	s := p.waitFor("the answer", func(s string) bool { return strings.Contains(s, "transcript") && idle(s) })
	if widest(s) <= 40 {
		t.Fatalf("no line wider than 40 before the resize:\n%s", s)
	}
	p.tmux("resize-window", "-t", "rally", "-x", "40", "-y", "30")
	// Re-wrapped, not cut: every character is still there, in order
	// (line breaks may fall inside "re-wraps").
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	p.waitFor("the answer re-wrapped to 40 columns", func(s string) bool {
		return widest(s) <= 40 && strings.Contains(flat(s), flat(answer))
	})
}

func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, len([]rune(l)))
	}
	return n
}

// printMode runs rally -p prompt in dir, with RALLY_HOME dir/home, so a
// session file is there to resume.
func printMode(t *testing.T, dir string, srv *llmtest.Server, prompt string) {
	t.Helper()
	cmd := exec.Command(rallyBinary(t), append(fakeFlags(srv), "-p", prompt)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "RALLY_HOME="+filepath.Join(dir, "home"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("print mode: %v\n%s", err, out)
	}
}

// TestTmuxContinue resumes, with --continue, the session print mode
// wrote in this directory: the UI shows its messages and /session names
// the file.
func TestTmuxContinue(t *testing.T) {
	needTmux(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "Noted: the code word is heliotrope."})
	dir := t.TempDir()
	printMode(t, dir, srv, "remember the code word")
	p := startRallyIn(t, dir, srv, 100, 30, "", "--continue")
	p.waitFor("the resumed messages", func(s string) bool {
		return strings.Contains(s, "› remember the code word") && strings.Contains(s, "Noted: the code word is heliotrope.")
	})
	p.typeLine("/session")
	s := p.waitText("Messages: 2")
	if !strings.Contains(s, "Session file: "+filepath.Join(dir, "home", "sessions")) {
		t.Fatalf("/session:\n%s", s)
	}
}

// TestTmuxContinueTornSession: resuming a session a crash left with a torn
// last line says so in the UI.
func TestTmuxContinueTornSession(t *testing.T) {
	needTmux(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "Noted."})
	dir := t.TempDir()
	printMode(t, dir, srv, "remember this")
	files, _ := filepath.Glob(filepath.Join(dir, "home", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %q", files)
	}
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"dead`)
	f.Close()
	p := startRallyIn(t, dir, srv, 100, 30, "", "--continue")
	p.waitFor("the load warning", func(s string) bool {
		return strings.Contains(s, "Noted.") && strings.Contains(s, "Session file: line 4: torn last line skipped")
	})
}

// TestTmuxQuit leaves the UI each way a user does and checks that rally
// exits 0 with the terminal back in its normal (cooked, echoing) mode and
// off the alternate screen.
func TestTmuxQuit(t *testing.T) {
	for _, c := range []struct {
		name string
		keys func(p *pane)
	}{
		{"/quit", func(p *pane) { p.typeLine("/quit") }},
		{"ctrl+d", func(p *pane) { p.keys("C-d") }},
		{"ctrl+c twice", func(p *pane) { p.keys("C-c"); p.waitText("Press ctrl+c again to quit"); p.keys("C-c") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			p := startRally(t, srv, 80, 24, "")
			p.tmux("send-keys", "-t", "rally", "-l", "echo before")
			p.keys("C-u") // ctrl+u is the editor's, not a quit: the draft goes
			c.keys(p)
			got := p.waitExit()
			if !strings.HasPrefix(got, "exit 0\n") {
				t.Fatalf("rally did not exit 0: %q\n%s", got, p.screen())
			}
			for _, mode := range []string{"icanon", "echo", "isig", "icrnl"} {
				if !slices.Contains(strings.Fields(got), mode) {
					t.Errorf("terminal mode %q not restored:\n%s", mode, got)
				}
			}
			if s := p.screen(); strings.Contains(s, "Type a prompt") {
				t.Errorf("the UI is still on the screen after exit:\n%s", s)
			}
		})
	}
}

// TestTmuxConfirm runs with tools.confirm ["bash"]: the model's bash call
// waits for y/n; n keeps the command from running, y runs it.
func TestTmuxConfirm(t *testing.T) {
	call := func(file string) llmtest.Step {
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "bash", Arguments: `{"command":"touch ` + file + `"}`}}}
	}
	srv := llmtest.NewServer(t, call("declined.txt"), llmtest.Step{Text: "Understood, I did not run it."},
		call("allowed.txt"), llmtest.Step{Text: "Done, the file exists."})
	p := startRally(t, srv, 100, 30, `{"tools":{"confirm":["bash"]}}`, "make a file")
	p.waitText(`Run bash {"command":"touch declined.txt"}? [y/n]`)
	p.keys("n")
	p.waitFor("the declined answer", func(s string) bool { return strings.Contains(s, "I did not run it.") && idle(s) })
	if _, err := os.Stat(filepath.Join(p.dir, "declined.txt")); err == nil {
		t.Fatal("the declined command ran")
	}
	p.typeLine("make it anyway")
	p.waitText(`Run bash {"command":"touch allowed.txt"}? [y/n]`)
	p.keys("y")
	p.waitFor("the allowed answer", func(s string) bool { return strings.Contains(s, "the file exists.") && idle(s) })
	if _, err := os.Stat(filepath.Join(p.dir, "allowed.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
}

// TestTmuxCompact compacts on the sim model's tiny window with /compact:
// the summary line comes and the UI is ready again (an explicit
// compaction ends without agent_settled).
func TestTmuxCompact(t *testing.T) {
	p := startRally(t, nil, 100, 30, "", "--provider", "sim", "--model", "sim-tiny")
	p.typeLine("run seq 1 200 then seq 201 400")
	p.waitFor("the run", func(s string) bool { return strings.Contains(s, "Done: 2 steps") && idle(s) })
	p.typeLine("/compact")
	s := p.waitFor("the compaction", func(s string) bool { return strings.Contains(s, "Compacted (manual):") && idle(s) })
	if strings.Contains(s, "Compacting…") || strings.Contains(s, "Error") {
		t.Fatalf("after /compact:\n%s", s)
	}
}

// TestTmuxAbort presses Esc while the answer streams: without a retry the
// line is "Operation aborted"; in the retried call, "Aborted after 2 calls (1
// retry)". Nothing more reaches the fake LLM either way.
func TestTmuxAbort(t *testing.T) {
	slow := llmtest.Step{Text: "Streaming slowly so that Esc lands in the middle of this answer.", Chunks: 12, Delay: 300 * time.Millisecond}
	srv := llmtest.NewServer(t, slow, llmtest.Step{Fault: llmtest.HTTPError, Status: 503}, slow)
	p := startRally(t, srv, 100, 30, `{"retry":{"baseDelayMs":100}}`, "the first prompt")
	p.waitText("Streaming slowly")
	p.keys("Escape")
	s := p.waitFor("the abort", func(s string) bool { return strings.Contains(s, "Operation aborted") && idle(s) })
	if strings.Contains(s, "Aborted after") || strings.Contains(s, "middle of this answer.") {
		t.Fatalf("abort without retries:\n%s", s)
	}
	p.typeLine("second")
	p.waitFor("the retried stream", func(s string) bool {
		return strings.Count(s, "Streaming slowly") == 2 && !strings.Contains(s, "Retrying (")
	})
	p.keys("Escape")
	s = p.waitFor("the abort after a retry", func(s string) bool { return strings.Contains(s, "Aborted after 2 calls (1 retry)") && idle(s) })
	if strings.Count(s, "Operation aborted") != 1 || strings.Contains(s, "Retry cancelled") {
		t.Fatalf("abort after a retry:\n%s", s)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}
