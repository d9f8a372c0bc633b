//go:build unix

package cli

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// silentRedis accepts connections and never answers, as a hung Redis
// does; a connection that sent its first command is reported on the
// channel: its client is then waiting for the reply.
func silentRedis(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				// Once the first command is in, rally waits on the reply.
				if _, err := c.Read(make([]byte, 1)); err == nil {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), ch
}

// TestSignalDuringStartup (issue 24, defect 3): a signal while rally is
// still starting, here waiting on a fleet Redis that accepted the
// connection and never answers (before any prompt is sent), ends rally
// within a second (milliseconds, in fact) with the signal's status (130,
// 143), and damages nothing: the settings file is as it was, and a
// session file, if one was begun, loads. Before, the Redis client waited
// out its 10 s timeout whatever the signal (it watches deadlines, not
// cancellations), and start-up then went on to read the learned window
// for another 2 s.
func TestSignalDuringStartup(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"ctrl-c", syscall.SIGINT, 130},
		{"sigterm", syscall.SIGTERM, 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := isolate(t)
			settingsJSON := []byte(`{"fleet":{"timeoutMs":10000}}` + "\n")
			if err := os.MkdirAll(".rally", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(".rally/settings.json", settingsJSON, 0o644); err != nil {
				t.Fatal(err)
			}
			fake := llmtest.NewServer(t)
			addr, accepted := silentRedis(t)
			cmd := exec.Command(os.Args[0], "--base-url", fake.URL+"/v1", "--model", "m", "-p", "hi")
			cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1", "RALLY_REDIS_URL=redis://"+addr, "RALLY_API_KEY=sk-test-startup-0123456789")
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			select {
			case <-accepted:
			case <-time.After(20 * time.Second):
				t.Fatalf("rally never reached the fleet's Redis: %s", errb.String())
			}
			if n := len(fake.Requests()); n != 0 {
				t.Fatalf("%d requests reached the model before the signal: not start-up", n)
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(8 * time.Second):
				t.Fatalf("rally still running 8 s after %v during start-up: %s", tt.sig, errb.String())
			}
			took := time.Since(sent)
			t.Logf("exit %v after the signal", took.Round(time.Millisecond))
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tt.code || took > time.Second {
				t.Errorf("exit %d after %v, want %d at once; stderr %q", code, took.Round(time.Millisecond), tt.code, errb.String())
			}
			if b, _ := os.ReadFile(".rally/settings.json"); !bytes.Equal(b, settingsJSON) {
				t.Errorf("settings file changed to %q", b)
			}
			files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
			for _, f := range files {
				if _, err := journal.Load(f); err != nil {
					t.Errorf("session file damaged: %v", err)
				}
			}
		})
	}
}
