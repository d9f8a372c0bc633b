package otelcoltest

import (
	"net"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestGRPCExport: with OTEL_EXPORTER_OTLP_PROTOCOL=grpc the same spans and
// metrics reach the Collector's gRPC port (HTTP/2 in clear text, as
// collectors listen on 4317).
func TestGRPCExport(t *testing.T) {
	col := startCollector(t)
	isolate(t)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "fine"})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.GRPC)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("TRACEPARENT", "00-"+parentTrace+"-"+parentSpan+"-01")
	rally(t, "", "--mode", "json", "--provider", "local", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "hi")
	var names []string
	for _, s := range spansOf(col.Traces.AllTraces(), parentTrace) {
		names = append(names, s.Name()+" < "+s.parent)
	}
	want := []string{"invoke_agent < " + parentSpan, "rally.turn < invoke_agent", "chat m < rally.turn"}
	if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Errorf("spans over gRPC %q, want %q", names, want)
	}
	if sums := metricSums(col.Metrics.AllMetrics()); sums["gen_ai.client.operation.duration"] != 1 {
		t.Errorf("metrics over gRPC %v, want one operation", sums)
	}
}

// TestDeadCollector: a collector that takes the connection and never
// answers costs the run at most the bounded flush at exit, and the run
// still succeeds.
func TestDeadCollector(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			isolate(t)
			srv := llmtest.NewServer(t, llmtest.Step{Text: "fine"})
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			start := time.Now()
			_, errOut := rally(t, "", "--mode", "json", "--provider", "local", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "hi")
			// An upper bound only: the flush is capped at 2 s; 6 s leaves
			// a loaded machine room and still catches a hang.
			if took := time.Since(start); took > 6*time.Second {
				t.Errorf("the run took %s with a dead collector", took)
			}
			t.Logf("stderr: %s", errOut)
		})
	}
}
