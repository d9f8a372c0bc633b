// Package redistest starts a real redis-server for a test, the way
// net/http/httptest starts a real HTTP server: its own process on a free
// loopback port, with a temp dir and no persistence, stopped when the test
// ends. Under CI=true a missing redis-server fails the test instead of
// skipping it, so CI cannot pass without running the fleet tests.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	// Addr is 127.0.0.1:port; URL is redis://Addr.
	Addr, URL string
	bin, dir  string
	port      int
	args      []string
	cmd       *exec.Cmd
	exited    chan struct{}
	t         testing.TB
}

// Start runs redis-server on a free loopback port and stops it when the
// test ends. args are added to its command line ("--requirepass", "pw").
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed (apt-get install -y redis-server); CI must run the fleet tests: %v", err)
		}
		t.Skip("redis-server is not installed; apt-get install -y redis-server to run the fleet tests")
	}
	s := &Server{bin: bin, dir: t.TempDir(), t: t, args: args}
	s.port = freePort(t)
	s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
	s.URL = "redis://" + s.Addr
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// freePort asks the kernel for a port nobody uses. Another process could
// take it before redis-server binds it; start then fails loudly.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "warning"}, s.args...)...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		s.t.Fatalf("redistest: %v", err)
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redistest: start redis-server: %v", err)
	}
	s.exited = make(chan struct{})
	var log strings.Builder
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	}()
	go func() { <-logged; s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.ping() == nil {
			return
		}
		select {
		case <-s.exited:
			s.t.Fatalf("redistest: redis-server exited at start:\n%s", log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s.Stop()
	s.t.Fatalf("redistest: redis-server did not answer on %s within 10s", s.Addr)
}

// ping sends PING in the inline protocol and expects +PONG.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	// A server with a password answers NOAUTH, which is up all the same.
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("redistest: PING answered %q", line)
	}
	return nil
}

// Stop kills the server and waits for it to exit, as a crash would end it
// (the data is gone: nothing is saved). It is safe to call twice.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Busiest is the most of times that fall within any one window (half
// open, starting at one of them): what a test of a fleet budget checks
// against the fake LLM's request log.
func Busiest(times []time.Time, window time.Duration) int {
	most := 0
	for _, from := range times {
		n := 0
		for _, t := range times {
			if d := t.Sub(from); d >= 0 && d < window {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
