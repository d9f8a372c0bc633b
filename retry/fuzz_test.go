package retry

import (
	"net/http"
	"testing"
	"time"
)

func FuzzClassify(f *testing.F) {
	f.Add(429, "retry-after", "2", `{"error":{"type":"rate_limit_error","message":"slow down"}}`)
	f.Add(500, "x-should-retry", "true", "prompt is too long: 1 tokens > 0 maximum")
	f.Add(0, "", "", "read tcp 1.2.3.4:443: connection reset by peer")
	f.Add(200, "", "", `data: {"error":{"code":502,"message":"[{\"x\":1}]"}}`)
	f.Fuzz(func(t *testing.T, status int, hk, hv, body string) {
		fl := Failure{Status: status, Body: body, Header: http.Header{}}
		fl.Header.Set(hk, hv)
		v := Classify(fl)
		if v.Class < Fatal || v.Class > ContextOverflow || v.Reason == "" {
			t.Fatalf("bad verdict %+v", v)
		}
		if again := Classify(fl); again != v {
			t.Fatalf("not deterministic: %+v then %+v", v, again)
		}
	})
}

func FuzzHint(f *testing.F) {
	f.Add("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT", "Please try again in 1.898s.")
	f.Add("x-ratelimit-reset", "1748779260", `{"retryDelay":"34s"}`)
	f.Add("retry-after-ms", "-1", "resets at 2025-06-01T13:00:00Z")
	f.Add("x-ratelimit-reset-tokens", "7m12.864s", "try again in ~5 min and 3 s")
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, hk, hv, body string) {
		h := http.Header{}
		h.Set(hk, hv)
		d := Hint(Failure{Header: h, Body: body}, now)
		if d < 0 || d > MaxHint {
			t.Fatalf("hint %v outside [0, %v]", d, MaxHint)
		}
	})
}
