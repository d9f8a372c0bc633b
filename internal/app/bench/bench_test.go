package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStat(t *testing.T) {
	for _, tc := range []struct {
		xs       []float64
		med, p99 float64
	}{
		{[]float64{3}, 3, 3},
		{[]float64{5, 1, 3}, 3, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 4},
	} {
		s := stat(tc.xs)
		if s.N != len(tc.xs) || s.Median != tc.med || s.P99 != tc.p99 {
			t.Errorf("stat(%v) = %+v, want median %v p99 %v", tc.xs, s, tc.med, tc.p99)
		}
	}
	var big []float64
	for i := range 200 {
		big = append(big, float64(i+1))
	}
	if s := stat(big); s.P99 != 198 {
		t.Errorf("p99 of 1..200 = %v, want 198", s.P99)
	}
	if s := stat(nil); s.Err == "" {
		t.Error("stat(nil) has no error")
	}
}

func TestTargetMet(t *testing.T) {
	s := Stat{N: 5, Median: 8, P99: 12}
	for _, tc := range []struct {
		t    *Target
		want bool
	}{
		{below(10), true},
		{below99(10), false},
		{atLeast(8), true},
		{atLeast(9), false},
		{exactly99(12), true},
	} {
		if got := tc.t.Met(s); got != tc.want {
			t.Errorf("%s on %+v: met = %v", tc.t, s, got)
		}
	}
	if below(10).Met(Stat{Err: "unsupported"}) {
		t.Error("a failed figure met its target")
	}
}

func TestLineType(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]},"type":"message_update"}`, "message_update"},
		{`{"type":"message_update","message":{"content":[{"type":"text"}]}}`, "message_update"},
		{`{"type":"agent_settled"}`, "agent_settled"},
		{`{"id":"s","type":"response","command":"get_state","success":true}`, "response"},
		{`{"message":{"content":[{"text":"a","type":"text"}]}}`, ""},
	} {
		if got := lineType([]byte(tc.line)); got != tc.want {
			t.Errorf("lineType(%s) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestWrite(t *testing.T) {
	rows := []Row{
		{Group: "start", Name: "--version", Unit: "ms", Rally: Stat{N: 3, Median: 4, P99: 5, Min: 3.5, Max: 5}, Other: Stat{N: 3, Median: 1000, P99: 1500, Min: 900, Max: 1500}, Target: below(10)},
		{Group: "stream", Name: "deltas/s", Unit: "deltas/s", Higher: true, Rally: Stat{N: 3, Median: 200000, P99: 250000, Min: 150000, Max: 250000}, Other: single(5000), Target: atLeast(300000)},
		{Group: "stream", Name: "delta-only", Unit: "deltas/s", Rally: Stat{Err: "unsupported: a | b"}},
	}
	var b strings.Builder
	if err := Write(&b, rows, "pi"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| start | --version | ms | 4.00 | 3.50–5.00 | 5.00 | 1000 | 900–1500 | 1500 | 250× | < 10.0 | met |",
		"| stream | deltas/s | deltas/s | 200000 | 150000–250000 | 250000 | 5000 | – | 5000 | 40.0× | ≥ 300000 | missed |",
		`unsupported: a \| b | – | –`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestGate checks the rate limiter of the recovery measurement: it turns
// away every request until its wait has passed since the first failure.
func TestGate(t *testing.T) {
	g := newGate(50*time.Millisecond, true)
	srv := httptest.NewServer(g)
	defer srv.Close()
	post := func() *http.Response {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	first := post()
	if first.StatusCode != 429 || first.Header.Get("retry-after") == "" {
		t.Fatalf("first answer %d with retry-after %q, want 429 with a hint", first.StatusCode, first.Header.Get("retry-after"))
	}
	if early := post(); early.StatusCode != 429 {
		t.Fatalf("an early retry got %d, want 429", early.StatusCode)
	}
	failedAt, _ := g.stats()
	for time.Since(failedAt) < 50*time.Millisecond {
		time.Sleep(time.Until(failedAt.Add(50 * time.Millisecond)))
	}
	if late := post(); late.StatusCode != 200 {
		t.Fatalf("a retry after the wait got %d, want 200", late.StatusCode)
	}
	if _, n := g.stats(); n != 3 {
		t.Fatalf("gate counted %d requests, want 3", n)
	}
}

// TestScaleInProcess runs a small scale measurement: every session settles
// despite the faults, and the heap figures were taken. Their size is
// BenchmarkScaleHeap's to report: a heap read is too noisy to assert on.
func TestScaleInProcess(t *testing.T) {
	f, err := startFake()
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	const n = 40
	f.use(newFaulty(0.2, 1, scaleAnswer(n)))
	res := Scale(context.Background(), f.URL, n)
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	if res.Settled != n || res.Succeeded < n*9/10 {
		t.Errorf("%d of %d settled, %d succeeded", res.Settled, n, res.Succeeded)
	}
	// Creating a session allocates, so the idle figure is above 0 at every
	// run; the streaming one is a live heap read, sampled or not.
	if res.IdleHeap <= 0 || res.Streaming < n/2 {
		t.Errorf("heap figures missing: %+v", res)
	}
	if f.requests.Load() <= n {
		t.Errorf("%d requests for %d sessions with 20%% faults: no fault was retried", f.requests.Load(), n)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// rallyBinary builds cmd/rally once for the tests that measure a process.
func rallyBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rally-bench-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "rally")
		_, file, _, _ := runtime.Caller(0)
		build := exec.Command("go", "build", "-o", binPath, "github.com/rally-agent/rally/cmd/rally")
		build.Dir = filepath.Dir(file)
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/rally: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if os.Getenv("RALLY_STREAMHEAP_FAKE") != "" {
		if err := streamHeapFake(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestRunProcess runs the quick bench against a real rally binary, the
// scale group in its worker process: every figure is measured, except
// the delta-only mode, which is either measured or said to be unsupported.
func TestRunProcess(t *testing.T) {
	bin := rallyBinary(t)
	rows, err := Run(context.Background(), Config{
		Rally: Agent{Name: "rally", Argv: []string{bin}}, Runs: 2, Quick: true,
		Groups: []string{"start", "stream", "abort", "scale"}, Worker: []string{bin, "bench"}, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, r := range rows {
		groups[r.Group]++
		switch {
		case r.Rally.Err != "" && strings.HasPrefix(r.Name, "delta-only") && strings.HasPrefix(r.Rally.Err, "unsupported: "):
		case r.Rally.Err != "":
			t.Errorf("%s %s: %s", r.Group, r.Name, r.Rally.Err)
		// CPU time counts 10 ms ticks; the streaming heap is a live heap
		// read, noise and all (BenchmarkScaleHeap reports it).
		case r.Rally.N == 0 || r.Rally.Median <= 0 && !strings.Contains(r.Name, "CPU") && !strings.Contains(r.Name, "heap per streaming"):
			t.Errorf("%s %s: no figure: %+v", r.Group, r.Name, r.Rally)
		}
	}
	for _, g := range []string{"start", "stream", "abort", "scale"} {
		if groups[g] == 0 {
			t.Errorf("no %s rows", g)
		}
	}
}
