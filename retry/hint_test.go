package retry

import (
	"net/http"
	"testing"
	"time"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestHint(t *testing.T) {
	tests := []struct {
		name string
		f    Failure
		want time.Duration
	}{
		{"retry-after-ms", Failure{Header: hdr("retry-after-ms", "1500", "retry-after", "9")}, 1500 * time.Millisecond},
		{"retry-after seconds", Failure{Header: hdr("retry-after", "2")}, 2 * time.Second},
		{"retry-after fractional", Failure{Header: hdr("retry-after", "0.5")}, 500 * time.Millisecond},
		{"retry-after http date", Failure{Header: hdr("retry-after", "Sun, 01 Jun 2025 12:00:30 GMT")}, 30 * time.Second},
		{"retry-after date in past ignored", Failure{Header: hdr("retry-after", "Sun, 01 Jun 2025 11:00:00 GMT")}, 0},
		{"retry-after negative ignored", Failure{Header: hdr("retry-after", "-5")}, 0},
		{"retry-after absurd ignored", Failure{Header: hdr("retry-after", "99999999999")}, 0},
		{"retry-after garbage ignored", Failure{Header: hdr("retry-after", "soon")}, 0},
		{"retry-after NaN ignored", Failure{Header: hdr("retry-after", "NaN")}, 0},
		{"bad retry-after falls through", Failure{Header: hdr("retry-after", "soon", "x-ratelimit-reset-requests", "1s")}, time.Second},
		{"x-ratelimit-reset-requests", Failure{Header: hdr("x-ratelimit-reset-requests", "6m0s")}, 6 * time.Minute},
		{"x-ratelimit-reset-tokens ms", Failure{Header: hdr("x-ratelimit-reset-tokens", "20ms")}, 20 * time.Millisecond},
		{"x-ratelimit-reset-tokens compound", Failure{Header: hdr("x-ratelimit-reset-tokens", "7m12.864s")}, 7*time.Minute + 12864*time.Millisecond},
		{"anthropic reset remaining 0", Failure{Header: hdr(
			"anthropic-ratelimit-requests-reset", "2025-06-01T12:00:05Z", "anthropic-ratelimit-requests-remaining", "10",
			"anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:40Z", "anthropic-ratelimit-tokens-remaining", "0")}, 40 * time.Second},
		{"anthropic reset earliest", Failure{Header: hdr(
			"anthropic-ratelimit-requests-reset", "2025-06-01T12:00:05Z",
			"anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:40Z")}, 5 * time.Second},
		{"x-ratelimit-reset epoch seconds", Failure{Header: hdr("x-ratelimit-reset", "1748779260")}, time.Minute},
		{"x-ratelimit-reset epoch ms", Failure{Header: hdr("x-ratelimit-reset", "1748779210000")}, 10 * time.Second},
		{"x-ratelimit-reset relative", Failure{Header: hdr("x-ratelimit-reset", "12")}, 12 * time.Second},
		{"x-ratelimit-reset-ms relative", Failure{Header: hdr("x-ratelimit-reset-ms", "250")}, 250 * time.Millisecond},
		{"body try again in seconds", Failure{Body: "Rate limit reached for gpt-4 in organization org-x on tokens per min. Limit: 10000, Used: 9000, Requested: 1500. Please try again in 1.898s."}, 1898 * time.Millisecond},
		{"body try again in ms", Failure{Body: "Please try again in 20ms."}, 20 * time.Millisecond},
		{"body please retry in", Failure{Body: "Please retry in 36.2s."}, 36200 * time.Millisecond},
		{"body retryDelay", Failure{Body: `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}`}, 34 * time.Second},
		{"body about minutes", Failure{Body: "You've hit your usage limit. Try again in ~5 min."}, 5 * time.Minute},
		{"body words", Failure{Body: "please retry after 6 seconds"}, 6 * time.Second},
		{"body hours minutes", Failure{Body: "limit will reset after 1h2m3s"}, time.Hour + 2*time.Minute + 3*time.Second},
		{"body spelled units", Failure{Body: "try again in 2 hours 30 minutes"}, 150 * time.Minute},
		{"body resets at rfc3339", Failure{Body: "quota resets at 2025-06-01T13:00:00Z."}, time.Hour},
		{"body resets at datetime", Failure{Body: "Usage resets at 2025-06-01 12:10:00 UTC"}, 10 * time.Minute},
		{"body resets_in_seconds", Failure{Body: `{"error":{"type":"usage_limit_reached","resets_in_seconds":3600}}`}, time.Hour},
		{"body resets_at epoch", Failure{Body: `{"error":{"type":"usage_limit_reached","resets_at":1748782800}}`}, time.Hour},
		{"body negative ignored", Failure{Body: "try again in -5s"}, 0},
		{"body nonsense ignored", Failure{Body: "try again in a while"}, 0},
		{"body absurd ignored", Failure{Body: "try again in 900000 hours"}, 0},
		{"header wins over body", Failure{Header: hdr("retry-after", "3"), Body: "Please try again in 20s"}, 3 * time.Second},
		{"nothing", Failure{Body: "internal error"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hint(tt.f, now); got != tt.want {
				t.Errorf("Hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHintClockAndEscaped(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) // 14:00 in Rome
	tests := []struct {
		name string
		now  time.Time
		body string
		want time.Duration
	}{
		{"later today in zone", at, "You've hit your limit · resets 4:50pm (Europe/Rome)", 2*time.Hour + 50*time.Minute},
		{"hour only", at, "resets 3pm (Europe/Rome)", time.Hour},
		{"past means tomorrow", at, "resets 1pm (Europe/Rome)", 23 * time.Hour},
		{"12am is midnight", at, "resets 12am (Europe/Rome)", 10 * time.Hour},
		{"gmt offset", at, "Access resets at 10:57 PM GMT-3.", 13*time.Hour + 57*time.Minute},
		{"utc", at, "limits will reset at 13:30 UTC", 90 * time.Minute},
		{"seconds count", at, "Please try again at 12:00:30 UTC.", 30 * time.Second},
		{"seconds later today", at, "resets at 13:30:15 UTC", 90*time.Minute + 15*time.Second},
		{"no zone uses now's zone", at.In(rome), "Limits will reset at 9:30 AM", 19*time.Hour + 30*time.Minute},
		{"unknown zone ignored", at, "resets 4:50pm (Mars/Olympus_Mons)", 0},
		{"not a clock", at, "resets 13pm (Europe/Rome)", 0},
		{"escaped retryDelay", at, `{"error":{"message":"upstream: {\"error\": {\"details\": [{\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"34s\"}]"}}`, 34 * time.Second},
		{"double escaped retryDelay", at, `raw: "{\\\"retryDelay\\\": \\\"1.984999999s\\\"}"`, 1984999999 * time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hint(Failure{Body: tt.body}, tt.now); got != tt.want {
				t.Errorf("Hint = %v, want %v", got, tt.want)
			}
		})
	}
}
