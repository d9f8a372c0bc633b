package otelcoltest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// collector is a running OpenTelemetry Collector: the OTLP receiver on
// two random loopback ports (HTTP and gRPC) and a capture exporter whose
// sinks keep every span and metric that went through the pipeline.
type collector struct {
	HTTP, GRPC string // base URLs
	Traces     *consumertest.TracesSink
	Metrics    *consumertest.MetricsSink
}

// captureConfig is the capture exporter's configuration: nothing.
type captureConfig struct{}

// freePort is a loopback port nobody listens on now; the collector
// binds it right after (it takes no port 0: its address would be unknown).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{Traces: new(consumertest.TracesSink), Metrics: new(consumertest.MetricsSink)}
	capture := exporter.NewFactory(component.MustNewType("capture"), func() component.Config { return &captureConfig{} },
		exporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			return exporterhelper.NewTraces(ctx, set, cfg, c.Traces.ConsumeTraces)
		}, component.StabilityLevelDevelopment),
		exporter.WithMetrics(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
			return exporterhelper.NewMetrics(ctx, set, cfg, c.Metrics.ConsumeMetrics)
		}, component.StabilityLevelDevelopment))
	otlp := otlpreceiver.NewFactory()
	factories := func() (otelcol.Factories, error) {
		return otelcol.Factories{
			Receivers: map[component.Type]receiver.Factory{otlp.Type(): otlp},
			Exporters: map[component.Type]exporter.Factory{capture.Type(): capture},
			Telemetry: otelconftelemetry.NewFactory(),
		}, nil
	}
	hp, gp := freePort(t), freePort(t)
	c.HTTP, c.GRPC = "http://127.0.0.1:"+strconv.Itoa(hp), "http://127.0.0.1:"+strconv.Itoa(gp)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:%d"}
      grpc: {endpoint: "127.0.0.1:%d"}
exporters:
  capture: {}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: error}
  pipelines:
    traces: {receivers: [otlp], exporters: [capture]}
    metrics: {receivers: [otlp], exporters: [capture]}
`, hp, gp)
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo:               component.NewDefaultBuildInfo(),
		Factories:               factories,
		DisableGracefulShutdown: true,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{"yaml:" + cfg}, ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		<-done
	})
	// Running means the receivers listen: a state to reach, with a
	// deadline, not a guess at how long starting takes.
	deadline := time.Now().Add(30 * time.Second)
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-done:
			t.Fatalf("collector stopped: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("collector did not start in 30 s")
		}
	}
	return c
}
