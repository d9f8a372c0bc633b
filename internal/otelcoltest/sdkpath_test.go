package otelcoltest

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/rally-agent/rally/internal/telemetry"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/llm/openai"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
)

// TestLibrarySDKSameTree: a Go program that embeds the session with the
// official SDK's providers and OTLP exporters (the library path) sends
// the Collector the same span tree and metric totals as rally's own
// pipeline (the binary's path, internal/telemetry), for one run through
// a 503, a 429 with retry-after and an overflow compaction.
func TestLibrarySDKSameTree(t *testing.T) {
	isolate(t)
	official := func(t *testing.T, ctx context.Context, col *collector) (trace.TracerProvider, metric.MeterProvider, func(context.Context) error) {
		host := strings.TrimPrefix(col.HTTP, "http://")
		te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(host), otlptracehttp.WithInsecure())
		if err != nil {
			t.Fatal(err)
		}
		me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(host), otlpmetrichttp.WithInsecure())
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(te))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)))
		return tp, mp, func(ctx context.Context) error {
			if err := tp.Shutdown(ctx); err != nil {
				return err
			}
			return mp.Shutdown(ctx)
		}
	}
	own := func(t *testing.T, ctx context.Context, col *collector) (trace.TracerProvider, metric.MeterProvider, func(context.Context) error) {
		tel, err := telemetry.Setup(ctx, telemetry.Config{Enabled: true, Endpoint: col.HTTP}, func(string) string { return "" }, "test")
		if err != nil {
			t.Fatal(err)
		}
		return tel.TracerProvider, tel.MeterProvider, tel.Shutdown
	}
	// One Collector at a time (a subtest stops its own): two running at
	// once race on gRPC's global logger inside the Collector.
	var sdkTree, ownTree []string
	var sdkSums, ownSums map[string]float64
	t.Run("official SDK", func(t *testing.T) { sdkTree, sdkSums = libraryRun(t, official) })
	t.Run("rally's pipeline", func(t *testing.T) { ownTree, ownSums = libraryRun(t, own) })
	want := []string{
		"ci job <  kind=Internal",
		"invoke_agent < ci job kind=Internal",
		"rally.turn < invoke_agent kind=Internal",
		"chat m < rally.turn kind=Client resend=- error=transient attempt=1 class=transient hint=none",
		"rally.retry.wait < rally.turn kind=Internal attempt=1 end=elapsed",
		"chat m < rally.turn kind=Client resend=1 error=transient attempt=2 class=transient hint=header",
		"rally.retry.wait < rally.turn kind=Internal attempt=2 end=elapsed",
		"chat m < rally.turn kind=Client resend=2 error=context_overflow attempt=2 class=context_overflow hint=none",
		"rally.compaction < rally.turn kind=Internal reason=overflow calls=1",
		"chat m < rally.turn kind=Client resend=3 error=- attempt=- class=- hint=-",
	}
	for name, got := range map[string][]string{"official SDK": sdkTree, "rally's pipeline": ownTree} {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: span tree:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, k := range []string{"rally.retry.attempts{class=transient}", "rally.compactions{reason=overflow}", "gen_ai.client.operation.duration",
		"rally.retry.wait.duration", "gen_ai.client.token.usage{type=output}", "gen_ai.client.token.usage{type=input}"} {
		if sdkSums[k] == 0 || sdkSums[k] != ownSums[k] {
			t.Errorf("metric %s: official SDK %v, rally's pipeline %v", k, sdkSums[k], ownSums[k])
		}
	}
}

// libraryRun runs a session with the providers setup makes into a
// Collector of its own and returns the span tree under an embedder's span
// and the metric totals.
func libraryRun(t *testing.T, setup func(*testing.T, context.Context, *collector) (trace.TracerProvider, metric.MeterProvider, func(context.Context) error)) ([]string, map[string]float64) {
	t.Helper()
	ctx := t.Context()
	col := startCollector(t)
	srv := llmtest.NewServer(t,
		llmtest.Step{Text: "first answer"},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": "1"}},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overflow},
		llmtest.Step{Text: "## Goal\nsummary"},
		llmtest.Step{Text: "recovered"},
	)
	tp, mp, shutdown := setup(t, ctx, col)
	model := llm.Model{ID: "m", API: llm.APIOpenAICompletions, Provider: "acme", Input: []string{"text"}, ContextWindow: 100000, MaxTokens: 1000}
	pol := retry.Policy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Minute}
	s, err := session.New(session.Config{Provider: &openai.Completions{ClientOptions: llm.ClientOptions{BaseURL: srv.URL + "/v1", Provider: "acme"}},
		Model: model, Retry: pol.For, TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	// The first prompt, outside the embedder's span, gives the second an
	// older part to compact.
	if err := s.Prompt(ctx, "first", session.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	pctx, parent := tp.Tracer("embedder").Start(ctx, "ci job")
	if err := s.Prompt(pctx, "second", session.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var tree []string
	for _, sp := range spansOf(col.Traces.AllTraces(), parent.SpanContext().TraceID().String()) {
		line := sp.Name() + " < " + sp.parent + " kind=" + sp.Kind().String()
		switch {
		case strings.HasPrefix(sp.Name(), "chat "):
			line += " resend=" + attr(sp, "http.request.resend_count") + " error=" + attr(sp, "error.type") +
				" attempt=" + attr(sp, "rally.retry.attempt") + " class=" + attr(sp, "rally.retry.class") + " hint=" + attr(sp, "rally.retry.hint_source")
		case sp.Name() == "rally.retry.wait":
			line += " attempt=" + attr(sp, "rally.retry.attempt") + " end=" + attr(sp, "rally.retry.wait.end")
		case sp.Name() == "rally.compaction":
			line += " reason=" + attr(sp, "rally.compaction.reason") + " calls=" + attr(sp, "rally.compaction.summary_calls")
		}
		tree = append(tree, line)
	}
	return tree, metricSums(col.Metrics.AllMetrics())
}
