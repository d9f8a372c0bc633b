package retry

import (
	"net/http"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
)

// BenchmarkClassify measures one classification of realistic errors (the
// issue's budget is 20 µs each).
func BenchmarkClassify(b *testing.B) {
	cases := map[string]Failure{
		"anthropic-overloaded": {Provider: "anthropic", Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`},
		"openai-rate-limit": {Provider: "openai", Status: 429, Header: http.Header{"X-Ratelimit-Reset-Tokens": {"1.898s"}},
			Body: `{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500. Please try again in 1.898s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
		"gemini-quota": {Provider: "gemini", Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}`},
		"text-only":    {Body: "request to https://api.example.com/v1/chat/completions failed, reason: socket hang up"},
	}
	now := time.Now()
	for name, f := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Classify(f)
			}
		})
		b.Run(name+"/with-hint", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Classify(f)
				Hint(f, now)
			}
		})
	}
}

// BenchmarkClassifyCorpus classifies every real error of the corpus; ns/op
// is per error, averaged over all of them. It also reports the slowest
// entry as worst-ns (the budget is 20 µs for every entry, not on
// average) and logs its name; BenchmarkClassifyEntry times them one by one.
func BenchmarkClassifyCorpus(b *testing.B) {
	entries := append(loadCorpus(b), readCorpus(b, heldbackFile)...)
	fs := make([]Failure, len(entries))
	for i, e := range entries {
		fs[i] = e.failure()
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		Classify(fs[i%len(fs)])
		i++
	}
	b.StopTimer()
	worst, name := worstEntry(entries, fs)
	b.ReportMetric(float64(worst.Nanoseconds()), "worst-ns")
	b.Logf("slowest entry: %s (%v)", name, worst)
}

// worstEntry times Classify on each entry and returns the slowest. Each
// entry's time is the best of several rounds, and the rounds sweep the whole
// corpus in turn, so a burst of load from other processes spoils one round
// of an entry, not all of them. It counts the process's CPU time where the
// system says it (proctest.CPUTime): on a machine shared with other work
// the wall clock mostly measures the others.
func worstEntry(entries []corpusEntry, fs []Failure) (time.Duration, string) {
	const rounds, reps = 7, 100
	clock := proctest.CPUTime
	if clock() == 0 {
		epoch := time.Now()
		clock = func() time.Duration { return time.Since(epoch) }
	}
	best := make([]time.Duration, len(fs))
	for r := range rounds {
		for i, f := range fs {
			start := clock()
			for range reps {
				Classify(f)
			}
			if d := (clock() - start) / reps; r == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	var worst time.Duration
	var name string
	for i, d := range best {
		if d > worst {
			worst, name = d, entries[i].Name
		}
	}
	return worst, name
}

// BenchmarkClassifyEntry times each corpus entry on its own (the held-back
// third included):
// go test -run '^$' -bench ClassifyEntry -benchtime 2000x ./retry | sort -k3 -n
func BenchmarkClassifyEntry(b *testing.B) {
	for _, e := range append(loadCorpus(b), readCorpus(b, heldbackFile)...) {
		f := e.failure()
		b.Run(e.Name, func(b *testing.B) {
			for b.Loop() {
				Classify(f)
			}
		})
	}
}
