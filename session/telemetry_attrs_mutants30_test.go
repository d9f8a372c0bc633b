package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/rally-agent/rally/llm"
)

// TestTelemetryCallAttributes pins each model call's span and the token
// metric for a prompt whose first call fails (503), whose second asks for
// a tool and whose third answers with cache tokens:
//   - only the call after the failure is a resend (resend_count 1);
//   - only a call that streamed has a time to first chunk;
//   - the failed call alone has an error status and error.type; a call
//     that worked ends after it started;
//   - the finished answer says why it finished;
//   - the turns are numbered 1 and 2, and neither they nor the prompt
//     failed; the tool's span ends;
//   - input tokens are the input plus the cache reads and writes.
//
// Mutants caught (telemetry.go, alive in this round's diff run): 190
// (turns counted down), 197 ×2 (resend_count on every call, or never), 215 ×2 (a time to first chunk for a call that
// streamed nothing, or none for one that did), 224 (finish reasons for
// an answer without one and not for this one), 230 ×2 (cache tokens
// subtracted), 257 (a working call ended at the zero time), 259 (error.type
// on a call that worked), 291 (a failed status on the turns and the prompt
// that were answered), 314 (the resend count decremented).
func TestTelemetryCallAttributes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &counter{}
		f := &fake{steps: []step{{err: overloaded()},
			{text: "counting", calls: []llm.Content{{Type: llm.ToolCallType, ID: "c1", Name: "count", Arguments: json.RawMessage(`{}`)}}},
			{text: "done now", usage: &llm.Usage{Input: 10, Output: 5, CacheRead: 3, CacheWrite: 2}}}}
		s, rec, reader, _ := traced(t, f, false)
		s.cfg.Tools = append(s.cfg.Tools, c)
		if err := s.Prompt(context.Background(), "count", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		var calls, turns []sdktrace.ReadOnlySpan
		tools := 0
		for _, sp := range rec.Ended() {
			switch {
			case sp.Name() == "chat m":
				calls = append(calls, sp)
			case sp.Name() == SpanTurn:
				turns = append(turns, sp)
			case strings.HasPrefix(sp.Name(), "execute_tool"):
				tools++
			}
		}
		if len(calls) != 3 || len(turns) != 2 || tools != 1 {
			t.Fatalf("%d chat, %d turn, %d tool spans ended, want 3, 2, 1", len(calls), len(turns), tools)
		}
		for i, want := range []struct{ resend, ttfc, errType, finish string }{
			{"-", "-", "transient", "-"},
			{"1", "0", "-", "[\"toolUse\"]"},
			{"-", "0", "-", "[\"stop\"]"},
		} {
			sp := calls[i]
			got := struct{ resend, ttfc, errType, finish string }{attrOf(sp, "http.request.resend_count"), attrOf(sp, "gen_ai.response.time_to_first_chunk"),
				attrOf(sp, "error.type"), attrOf(sp, "gen_ai.response.finish_reasons")}
			if got != want {
				t.Errorf("call %d: resend %s, ttfc %s, error.type %s, finish %s; want %+v", i+1, got.resend, got.ttfc, got.errType, got.finish, want)
			}
			if failed := sp.Status().Code == codes.Error; failed != (i == 0) {
				t.Errorf("call %d: status %v", i+1, sp.Status())
			}
			if sp.EndTime().Before(sp.StartTime()) {
				t.Errorf("call %d ended %v, before it started %v", i+1, sp.EndTime(), sp.StartTime())
			}
		}
		for i, sp := range turns {
			if n := attrOf(sp, "rally.turn.number"); n != []string{"1", "2"}[i] {
				t.Errorf("turn %d numbered %s", i+1, n)
			}
		}
		for _, sp := range rec.Ended() {
			if (sp.Name() == SpanTurn || sp.Name() == SpanInvokeAgent) && sp.Status().Code == codes.Error {
				t.Errorf("%s of a prompt that was answered has status %v", sp.Name(), sp.Status())
			}
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		sums := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if h, ok := m.Data.(metricdata.Histogram[int64]); ok && m.Name == "gen_ai.client.token.usage" {
					for _, dp := range h.DataPoints {
						typ, _ := dp.Attributes.Value("gen_ai.token.type")
						sums[typ.AsString()] += dp.Sum
					}
				}
			}
		}
		if sums["input"] != 10+15 || sums["output"] != 5+5 {
			t.Errorf("token usage %v, want input 25 (10, then 10+3+2) and output 10", sums)
		}
	})
}
