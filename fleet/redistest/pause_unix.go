//go:build unix

package redistest

import "syscall"

// Pause stops the server without closing anything (SIGSTOP): connections
// stay open and nothing answers, the way a hung or overloaded Redis
// behaves. Resume lets it go on.
func (s *Server) Pause() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatalf("redistest: pause: %v", err)
	}
}

// Resume continues a paused server.
func (s *Server) Resume() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGCONT)
	}
}
