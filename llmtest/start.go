package llmtest

import (
	"net/http/httptest"
	"testing"
)

// NewServer starts a Server playing script on a loopback listener, like
// httptest.NewServer, and closes it when the test ends. Its URL field is
// the base URL (no path; add "/v1" and the like as the client expects).
func NewServer(tb testing.TB, script ...Step) *Server {
	tb.Helper()
	s := New(script...)
	s.Start(tb)
	return s
}

// Start serves s on a loopback listener until the test ends, and returns
// its base URL (also in s.URL). Stalls are ended before the listener
// closes, so cleanup never waits on a client that is still reading.
func (s *Server) Start(tb testing.TB) string {
	tb.Helper()
	hs := httptest.NewServer(s)
	s.URL = hs.URL
	tb.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return hs.URL
}

// Replay returns a Server that answers every request with body, byte for
// byte, with status (0 means 200): a recorded SSE transcript, or a
// provider's JSON error body with its status.
func Replay(body []byte, status int) *Server {
	return New(Step{Raw: body, Status: status})
}
