package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rally-agent/rally/llm"
)

// traced is a session over f whose spans rec keeps and whose metrics
// reader collects.
func traced(t *testing.T, f *fake, capture bool) (*Session, *tracetest.SpanRecorder, *sdkmetric.ManualReader, *sdktrace.TracerProvider) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	s, _, stop := newSession(t, f, Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), CaptureContent: capture})
	t.Cleanup(stop)
	return s, rec, reader, tp
}

func attrOf(s sdktrace.ReadOnlySpan, k string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == k {
			return kv.Value.Emit()
		}
	}
	return "-"
}

// tree is "name < parent name" per span, in start order (the recorder's:
// in fake time many start at one instant).
func tree(spans []sdktrace.ReadWriteSpan) []string {
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	var out []string
	for _, s := range spans {
		p := names[s.Parent().SpanID().String()]
		if p == "" {
			p = "(" + s.Parent().SpanID().String() + ")"
		}
		out = append(out, s.Name()+" < "+p)
	}
	return out
}

// TestTelemetrySpans: a Go program's span in the prompt's context is the
// parent; a retried turn is one turn span holding both calls, the wait
// (its real length, in fake time) and the tool call; nothing is
// recorded of the conversation by default.
func TestTelemetrySpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &counter{}
		f := &fake{steps: []step{{err: overloaded()}, {text: "secret words", calls: []llm.Content{{Type: llm.ToolCallType, ID: "c1", Name: "count", Arguments: json.RawMessage(`{"what":"secret args"}`)}}}, {text: "done"}}}
		s, rec, reader, tp := traced(t, f, false)
		s.cfg.Tools = append(s.cfg.Tools, c)
		ctx, parent := tp.Tracer("embedder").Start(t.Context(), "ci job")
		if err := s.Prompt(ctx, "secret prompt", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		parent.End()
		got := strings.Join(tree(rec.Started()), "\n")
		want := strings.Join([]string{
			"ci job < (0000000000000000)",
			"invoke_agent < ci job",
			"rally.turn < invoke_agent",
			"chat m < rally.turn",
			"rally.retry.wait < rally.turn",
			"chat m < rally.turn",
			"execute_tool count < rally.turn",
			"rally.turn < invoke_agent",
			"chat m < rally.turn",
		}, "\n")
		if got != want {
			t.Errorf("spans:\n%s\nwant:\n%s", got, want)
		}
		for _, sp := range rec.Ended() {
			if sp.Name() == SpanWait {
				if d := sp.EndTime().Sub(sp.StartTime()); d != 2*time.Second || attrOf(sp, "rally.retry.wait.end") != "elapsed" {
					t.Errorf("wait span %s %s, want 2s elapsed", d, attrOf(sp, "rally.retry.wait.end"))
				}
			}
			for _, kv := range sp.Attributes() {
				if strings.Contains(kv.Value.Emit(), "secret") {
					t.Errorf("span %s records %s=%q without captureContent", sp.Name(), kv.Key, kv.Value.Emit())
				}
			}
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				found[m.Name] = true
			}
		}
		for _, name := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.client.operation.time_to_first_chunk", "rally.retry.attempts", "rally.retry.wait.duration"} {
			if !found[name] {
				t.Errorf("no %s metric; have %v", name, found)
			}
		}
	})
}

// TestTelemetryCaptureContent: captureContent puts the answer and the tool
// arguments into the spans.
func TestTelemetryCaptureContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{text: "visible words", calls: []llm.Content{{Type: llm.ToolCallType, ID: "c1", Name: "count", Arguments: json.RawMessage(`{"what":"visible args"}`)}}}, {text: "done"}}}
		s, rec, _, _ := traced(t, f, true)
		s.cfg.Tools = append(s.cfg.Tools, &counter{})
		if err := s.Prompt(t.Context(), "hi", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		var text string
		for _, sp := range rec.Ended() {
			text += attrOf(sp, "gen_ai.output.messages") + attrOf(sp, "gen_ai.tool.call.arguments")
		}
		if !strings.Contains(text, "visible words") || !strings.Contains(text, "visible args") {
			t.Errorf("captured %q, want the answer and the arguments", text)
		}
	})
}

// TestTelemetryCancelledWait: AbortRetry during the wait ends its span as
// cancelled, and the prompt's spans all end.
func TestTelemetryCancelledWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{steps: []step{{err: overloaded()}}}
		s, rec, _, _ := traced(t, f, false)
		done := make(chan error)
		go func() { done <- s.Prompt(t.Context(), "hi", PromptOptions{}) }()
		time.Sleep(time.Second) // fake time: inside the 2 s wait
		synctest.Wait()
		s.AbortRetry()
		<-done
		var ends []string
		for _, sp := range rec.Ended() {
			if sp.Name() == SpanWait {
				ends = append(ends, attrOf(sp, "rally.retry.wait.end"))
			}
		}
		if len(ends) != 1 || ends[0] != "cancelled" {
			t.Errorf("wait spans ended %v, want one cancelled", ends)
		}
		if started, ended := len(rec.Started()), len(rec.Ended()); started != ended {
			t.Errorf("%d spans started, %d ended", started, ended)
		}
	})
}
