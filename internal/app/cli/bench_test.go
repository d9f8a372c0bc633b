package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rally-agent/rally/internal/app/bench"
	"github.com/rally-agent/rally/llmtest"
)

func TestBenchUnknownGroup(t *testing.T) {
	_, stderr, code := run(t, "", "bench", "--only", "start,nope")
	if code != 2 || !strings.Contains(stderr, `no group "nope"`) {
		t.Fatalf("exit %d, stderr %q; want 2 naming the group", code, stderr)
	}
}

// TestBenchScaleWorker runs the scale measurement's worker as the bench
// runs it: sessions against a fake LLM, the result as JSON on stdout.
func TestBenchScaleWorker(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded}, llmtest.Step{Text: "one two three", Chunks: 3})
	stdout, stderr, code := run(t, "", "bench", "--scale-worker", "10", "--fake-url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res bench.ScaleResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %q", err, stdout)
	}
	if res.Sessions != 10 || res.Settled != 10 || res.Succeeded != 10 {
		t.Fatalf("result %+v: want 10 sessions settled and succeeded", res)
	}
}
