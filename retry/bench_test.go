package retry

import (
	"net/http"
	"testing"
	"time"
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
// is per error, averaged over all of them.
func BenchmarkClassifyCorpus(b *testing.B) {
	entries := loadCorpus(b)
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
}
