package web

import (
	"fmt"
	"github.com/rally-agent/rally/internal/proctest"
	"strings"
	"testing"
	"time"
)

// Budgets (issue 16): the sessions page with 1,000 session files under
// 200 ms; one session of 10,000 entries, transcript and timeline, under
// 500 ms. Run with
//
//	go test -run '^$' -bench . -benchtime 10x ./internal/app/web

// benchSession is a session of about n entries: prompts with a tool call,
// its result and an answer, and every fifth prompt a failed, retried call.
func benchSession(id string, start time.Time, n int) *fixture {
	j := newFixtureAt(id, start)
	ms := 0
	next := func(d int) time.Time { ms += d; return j.at(ms) }
	for p := 0; len(j.lines)-1 < n; p++ {
		j.user(next(1000), fmt.Sprintf("Prompt %d: look at the tests in package %d and fix what fails.", p, p))
		if p%5 == 0 {
			failed := next(700)
			j.call(failed, next(2000), "", "529 overloaded_error: Overloaded", true) // written after its wait
		}
		s := next(20)
		j.tool(s, next(900), next(400), "bash", `{"command":"go test ./...","timeout":120}`,
			strings.Repeat("ok  \tgithub.com/rally-agent/rally/retry\t0.412s\n", 8))
		s = next(20)
		j.call(s, next(1500), strings.Repeat("The tests pass now. I changed the retry budget and added a case. ", 4), "", false)
	}
	return j
}

func serve(b *testing.B, e *env, path string) int {
	w := serveAuthed(e.srv, path)
	if w.Code != 200 {
		b.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
	}
	return w.Body.Len()
}

func BenchmarkSessionsPage1000(b *testing.B) {
	e := newEnv(b)
	for i := range 1000 {
		benchSession(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), t0.Add(time.Duration(i)*time.Minute), 12).write(b, e.sessions)
	}
	// cold: every file shown read, as on the first visit; warm: the
	// summaries of unchanged files kept from the visit before. The page is
	// the first one (the newest 100); all is the 1,000 on one page.
	for _, path := range []string{"/sessions", "/sessions?all=1"} {
		name := strings.TrimPrefix(path, "/sessions")
		if name == "" {
			name = "page1"
		} else {
			name = "all"
		}
		b.Run(name+"/cold", func(b *testing.B) {
			measure(b, func() {
				e.srv.sums = newSummaries(e.sessions, nil)
				serve(b, e, path)
			})
		})
		b.Run(name+"/warm", func(b *testing.B) {
			serve(b, e, path)
			measure(b, func() { serve(b, e, path) })
		})
	}
}

// measure runs f b.N times and reports its CPU time per run beside the
// wall time.
func measure(b *testing.B, f func()) {
	cpu := proctest.CPUTime()
	for b.Loop() {
		f()
	}
	if b.N > 0 {
		b.ReportMetric(float64((proctest.CPUTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	}
}

func BenchmarkSessionPage10000(b *testing.B) {
	e := newEnv(b)
	j := benchSession("99999999-0000-4000-8000-000000000000", t0, 10000)
	name := j.write(b, e.sessions)
	if n := len(j.lines) - 1; n < 10000 {
		b.Fatalf("%d entries", n)
	}
	var size int
	measure(b, func() { size = serve(b, e, "/sessions/"+name) })
	b.ReportMetric(float64(size)/1e6, "MB/page")
}
