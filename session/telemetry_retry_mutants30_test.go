package session

import (
	"context"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/rally-agent/rally/llm"
)

// TestTelemetryHintAndSwitch: a failed call's span says where the wait
// came from (none for the policy's own backoff, body for a "try again in"
// in the message, header for a retry-after) and, after a usage limit,
// what the session switched to, which rally.usage_limit.switches counts.
// Mutants caught (telemetry.go, alive in this round's diff run): 329 ×2 (a
// hinted wait reported as none; an unhinted one as body), 333 (a body's
// hint reported as the header's), 309 and 320 (the switch never named or
// never counted).
func TestTelemetryHintAndSwitch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		second := &fake{steps: []step{{text: "from the other key"}}}
		f := &fake{steps: []step{{err: overloaded()}, {err: apiErr(429, `{"error":{"type":"rate_limit_error","message":"Rate limit reached. Please try again in 1.5s."}}`)}, {err: usageLimit()}}}
		sw := &froms{targets: []llm.Target{{Provider: second, Model: llm.Model{ID: "m", Provider: "fake"}, Name: "b", Ref: "ref-b"}}}
		s, rec, reader, _ := traced(t, f, false)
		s.cfg.Switcher = sw
		if err := s.Prompt(context.Background(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		var calls []sdktrace.ReadOnlySpan
		for _, sp := range rec.Ended() {
			if sp.Name() == "chat m" {
				calls = append(calls, sp)
			}
		}
		if len(calls) != 4 {
			t.Fatalf("%d chat spans, want 4", len(calls))
		}
		for i, want := range [][2]string{{"none", "-"}, {"body", "-"}, {"header", "b"}} {
			if got := [2]string{attrOf(calls[i], "rally.retry.hint_source"), attrOf(calls[i], "rally.retry.switched_to")}; got != want {
				t.Errorf("call %d: hint_source %s, switched_to %s; want %v", i+1, got[0], got[1], want)
			}
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var switches int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "rally.usage_limit.switches" {
					for _, dp := range sum.DataPoints {
						switches += dp.Value
					}
				}
			}
		}
		if switches != 1 {
			t.Errorf("rally.usage_limit.switches %d, want 1", switches)
		}
	})
}
