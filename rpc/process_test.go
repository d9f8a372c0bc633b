package rpc

import (
	"encoding/json"
	"fmt"
	"github.com/rally-agent/rally/internal/jsonl"
	"github.com/rally-agent/rally/session"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file run a real `rally --mode rpc`, built once from
// ./cmd/rally into a temporary folder on first use.

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
	pkgDir    string // the package's folder: tests change the working directory
)

func TestMain(m *testing.M) {
	pkgDir, _ = os.Getwd()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// rallyBinary builds the rally command (once per test binary run).
func rallyBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "rally-rpc-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rally")
		build := exec.Command("go", "build", "-o", binPath, "github.com/rally-agent/rally/cmd/rally")
		build.Dir = pkgDir
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/rally: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// isolate gives the test its own RALLY_HOME and working directory, no
// provider keys, and a project settings file when settingsJSON is set.
func isolate(tb testing.TB, settingsJSON string) {
	tb.Helper()
	tb.Setenv("RALLY_HOME", tb.TempDir())
	for _, k := range []string{"RALLY_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"} {
		tb.Setenv(k, "")
	}
	tb.Chdir(tb.TempDir())
	if settingsJSON != "" {
		if err := os.MkdirAll(".rally", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(".rally/settings.json", []byte(settingsJSON), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// proc is a rally --mode rpc process driven line by line, for what the
// client would hide: exact lines and timing.
type proc struct {
	tb     testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout, split at LF only
	stderr *strings.Builder
	mu     sync.Mutex

	stopOnce sync.Once
	exitErr  error
}

func startProc(tb testing.TB, args ...string) *proc {
	tb.Helper()
	return startProcArgs(tb, rallyBinary(tb), append([]string{"--mode", "rpc"}, args...))
}

func startProcArgs(tb testing.TB, bin string, args []string) *proc {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	p := &proc{tb: tb, cmd: cmd, in: in, lines: make(chan []byte, 1<<16), stderr: &strings.Builder{}}
	cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		lr := jsonl.NewReader(out, maxClientLine)
		for {
			b, err := lr.Next()
			if err != nil {
				return
			}
			p.lines <- append([]byte(nil), b...)
		}
	}()
	tb.Cleanup(func() { p.stop() })
	return p
}

// stop closes rally's stdin and waits for it to exit (killing it after
// 10 s); it returns the exit error.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		p.in.Close()
		for range p.lines { // the rest of stdout, so the process never blocks on it
		}
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case p.exitErr = <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			p.exitErr = <-done
		}
	})
	return p.exitErr
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (p *proc) send(line string) {
	p.tb.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.tb.Fatalf("write %q: %v", line, err)
	}
}

// until reads lines until one satisfies match, and returns it decoded.
func (p *proc) until(what string, match func(m map[string]any) bool) map[string]any {
	p.tb.Helper()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case b, ok := <-p.lines:
			if !ok {
				p.tb.Fatalf("stdout ended waiting for %s; stderr:\n%s", what, p.stderrText())
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				p.tb.Fatalf("stdout line is not JSON: %q", b)
			}
			if match(m) {
				return m
			}
		case <-deadline.C:
			p.tb.Fatalf("timed out waiting for %s; stderr:\n%s", what, p.stderrText())
		}
	}
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) event(typ session.EventType) map[string]any {
	p.tb.Helper()
	return p.until(string(typ), func(m map[string]any) bool { return m["type"] == string(typ) })
}

func (p *proc) response(id string) map[string]any {
	p.tb.Helper()
	return p.until("response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}
