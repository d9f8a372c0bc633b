package tui

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llmtest"
)

// TestTmuxFleetWait: a fleet wait (a request budget spent) shows in the
// status line while the UI runs, and nothing the run says lands on the
// screen as stray text (it used to be written to stderr, over the
// editor).
func TestTmuxFleetWait(t *testing.T) {
	needTmux(t)
	rs := redistest.Start(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "The first answer."}, llmtest.Step{Text: "The second answer."})
	// One request per 3 s for each key of acme: the second prompt waits.
	settings := `{"fleet":{"redis":"` + rs.URL + `","timeoutMs":2000,"budgets":{"acme":{"requestsPerMinute":1,"windowMs":3000}}}}`
	env := []string{"RALLY_API_KEY=sk-test-fleetwait-0123456789"}
	p := startRallyEnv(t, t.TempDir(), env, srv, 100, 24, settings, "--provider", "acme")
	p.typeLine("first")
	p.waitFor("the first answer", func(s string) bool { return strings.Contains(s, "The first answer.") && idle(s) })
	p.typeLine("second")
	s := p.waitText("request budget of acme")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "fleet: waiting") {
		t.Fatalf("the wait is not in the status line %q:\n%s", last, s)
	}
	if n := strings.Count(s, "fleet:"); n != 1 || strings.Contains(s, "rally:") {
		t.Fatalf("stray text on the screen (%d fleet lines):\n%s", n, s)
	}
	s = p.waitFor("the second answer", func(s string) bool { return strings.Contains(s, "The second answer.") })
	if strings.Contains(s, "rally:") {
		t.Fatalf("stray text on the screen:\n%s", s)
	}
}
