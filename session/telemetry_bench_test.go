package session

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	tel "github.com/rally-agent/rally/internal/telemetry"
)

// discard is a span exporter that drops what it gets: the benchmarks
// measure the session's instrumentation and the SDK, not a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// withTelemetry is cfg with a real SDK behind it (a batching tracer, a
// meter with a reader), as the command line sets it up.
func withTelemetry(b *testing.B, cfg Config) Config {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	cfg.TracerProvider, cfg.MeterProvider = tp, mp
	return cfg
}

// withRallyTelemetry is cfg with the rally binary's own pipeline behind
// it (internal/telemetry), exporting over loopback HTTP to a collector
// that reads and drops what it gets.
func withRallyTelemetry(b *testing.B, cfg Config) Config {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	t, err := tel.Setup(context.Background(), tel.Config{Enabled: true, Endpoint: srv.URL}, func(string) string { return "" }, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.Shutdown(context.Background()); srv.Close() })
	cfg.TracerProvider, cfg.MeterProvider = t.TracerProvider, t.MeterProvider
	return cfg
}

// telemetryModes are the benchmarks' cases: off, the official SDK (a Go
// program's), and rally's own pipeline (the binary's).
var telemetryModes = []struct {
	name string
	with func(*testing.B, Config) Config
}{
	{"off", func(_ *testing.B, c Config) Config { return c }},
	{"on", withTelemetry},
	{"rally", withRallyTelemetry},
}

// BenchmarkTelemetryDelta is the per-delta cost with telemetry off and on
// (the budget: on, under 5 % more than off): one prompt streaming 20,000
// deltas to one subscriber.
func BenchmarkTelemetryDelta(b *testing.B) {
	const n = 20000
	for _, mode := range telemetryModes {
		b.Run(mode.name, func(b *testing.B) {
			cfg := mode.with(b, Config{Provider: deltas{n}})
			for b.Loop() {
				s, _ := New(cfg)
				unsub := s.Subscribe(func(Event) {})
				s.Prompt(context.Background(), "go", PromptOptions{})
				unsub()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delta")
		})
	}
}

// BenchmarkTelemetryAttempt is the cost of one model attempt (a prompt of
// one call with one delta) with telemetry off and on: the prompt, turn
// and inference spans and their metric records.
func BenchmarkTelemetryAttempt(b *testing.B) {
	for _, mode := range telemetryModes {
		b.Run(mode.name, func(b *testing.B) {
			cfg := mode.with(b, Config{Provider: deltas{1}})
			s, _ := New(cfg)
			for b.Loop() {
				s.mu.Lock()
				s.messages = s.messages[:0] // each attempt sends the same context
				s.mu.Unlock()
				s.Prompt(context.Background(), "go", PromptOptions{})
			}
		})
	}
}
