package fleet_test

import (
	"strings"
	"testing"

	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/llmtest"
)

// These tests each catch a mutant that lived through the rest of the
// fleet tests in issue 30's full run on this tree (scripts/mutate.sh -a
// ./fleet); the bug is named in each test's comment.

// evals counts the scripts Redis was sent (EVAL, EVALSHA).
func evals(w *redistest.Watch) int {
	n := 0
	for _, c := range w.Commands() {
		if len(c) > 0 && strings.HasPrefix(strings.ToUpper(c[0]), "EVAL") {
			n++
		}
	}
	return n
}

// TestReplicaAskedOnce: a Redis that has become a read-only replica (after
// a failover) refuses the admission's writes; the Fleet goes local on that
// one answer and the request goes. Bug caught: the client's own retries
// left on (MaxRetries 1 for -1), so each exchange is sent again after a
// back-off: twice the load on a refusing server, and a prompt held longer.
func TestReplicaAskedOnce(t *testing.T) {
	// A replica of a master that is not there: it serves reads and
	// refuses writes, as an old master does after a failover.
	rs := redistest.Start(t, "--replicaof", "127.0.0.1", "1")
	w := rs.Watch()
	fake := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	var warned []string
	g := gate(open(t, rs.URL, func(m string) { warned = append(warned, m) }), fake, key1)
	g.Budget = fleet.Budget{Requests: 10}
	if err := ask(t.Context(), g); err != nil {
		t.Fatalf("a request with the fleet on a replica: %v", err)
	}
	// (Its PING answers, so the Fleet may be back in shared mode by now.)
	if len(warned) != 1 || !strings.Contains(warned[0], "READONLY") {
		t.Fatalf("warned %q; want local mode on the READONLY answer", warned)
	}
	// EVALSHA (the script is not loaded there), then EVAL, refused.
	if n := evals(w); n != 2 {
		t.Fatalf("%d scripts sent to the replica, want 2 (EVALSHA, then one EVAL)", n)
	}
}
