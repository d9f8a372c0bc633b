package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llmtest"
)

// hostileText is what a model, a provider or a session file may hold: a
// clipboard write, a window title, a screen clear, a C1 CSI and a
// right-to-left override.
const hostileText = "before \x1b]52;c;cHduZWQ=\x07 \x1b]0;pwned\x07 \x1b[2J \u009b31m \u202eevil after"

// terminalBytes are what a terminal must never receive from foreign text.
var terminalBytes = []string{"\x1b", "\x07", "\u009b", "\u202e"}

// openPty opens a pseudo-terminal pair: the master to read what a
// terminal would show, the slave to hand a child as stdout and stderr.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// onTerminal runs rally (this test binary, see TestMain) with stdout and
// stderr on a pseudo-terminal and returns every byte the terminal got.
func onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, slave := openPty(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
	cmd.Stdout, cmd.Stderr = slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds it; EOF (EIO) once it exits
	var got bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&got, master); close(done) }()
	cmd.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal never closed")
	}
	return got.String()
}

func assertNoControls(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range terminalBytes {
		if strings.Contains(out, c) {
			t.Errorf("%s: the terminal got %q: %q", what, c, out)
		}
	}
	if !strings.Contains(out, "␛]52;c;") || !strings.Contains(out, "<U+202E>") {
		t.Errorf("%s: the controls are not shown as visible stand-ins: %q", what, out)
	}
}

// TestPrintModeTerminalEscapes: on a terminal, the model's answer, a
// provider's error body and a tool name reach the screen with every
// control made visible; into a pipe the answer stays byte-exact.
func TestPrintModeTerminalEscapes(t *testing.T) {
	fake := func(srv *llmtest.Server) []string {
		return []string{"--no-session", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m", "-p", "hi"}
	}
	t.Run("answer on a terminal", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewServer(t, llmtest.Step{Text: hostileText})
		assertNoControls(t, "answer", onTerminal(t, fake(srv)...))
	})
	t.Run("answer into a pipe is byte-exact", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewServer(t, llmtest.Step{Text: hostileText})
		out, errOut, code := runMain(t, fake(srv)...)
		if code != 0 || out != hostileText+"\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q; want the answer byte for byte", code, out, errOut)
		}
	})
	t.Run("provider error body", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewServer(t, llmtest.Step{Status: 400, Body: `{"error":{"message":"` + strings.ReplaceAll(jsonEscape(hostileText), `"`, `\"`) + `"}}`})
		assertNoControls(t, "error", onTerminal(t, fake(srv)...))
	})
	t.Run("tool name", func(t *testing.T) {
		isolate(t)
		srv := llmtest.NewServer(t,
			llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: hostileText, Arguments: `{}`}}},
			llmtest.Step{Text: "done"})
		assertNoControls(t, "tool name", onTerminal(t, fake(srv)...))
	})
}

// TestSessionsListTerminalEscapes: `rally sessions` shows prompts and model
// names read from session files, which anyone can write.
func TestSessionsListTerminalEscapes(t *testing.T) {
	isolate(t)
	if _, errOut, code := run(t, "", "-p", hostileText); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	assertNoControls(t, "sessions", onTerminal(t, "sessions"))
}

// jsonEscape writes s as the inside of a JSON string.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\\' {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestFleetStatusTerminalEscapes: `rally fleet status` shows mark reasons
// read from Redis, which any fleet peer (or a provider's error body) can
// fill.
func TestFleetStatusTerminalEscapes(t *testing.T) {
	rs := redistest.Start(t)
	homeA, _ := fleetHomes(t, rs.URL)
	t.Setenv("RALLY_HOME", homeA)
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":2000}}`)
	limited := llmtest.Step{Fault: llmtest.HTTPError, Status: 429, Header: map[string]string{"retry-after": "18000"},
		Body: `{"error":{"message":"Daily usage limit reached ` + jsonEscape(hostileText) + `","type":"usage_limit_reached","code":"usage_limit_reached"}}`}
	srv := llmtest.NewServer(t, limited)
	run(t, "", acmeArgs(srv, "m")...)
	assertNoControls(t, "fleet status", onTerminal(t, "fleet", "status"))
}
