package telemetry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestOn(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		env  map[string]string
		want bool
	}{
		{"nothing set: off", Config{}, nil, false},
		{"the setting", Config{Enabled: true}, nil, true},
		{"an endpoint variable", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"a signal's endpoint", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, true},
		{"an otlp exporter", Config{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"a console exporter is not rally's", Config{}, map[string]string{"OTEL_TRACES_EXPORTER": "console"}, false},
		{"OTEL_SDK_DISABLED wins over the setting", Config{Enabled: true}, map[string]string{"OTEL_SDK_DISABLED": "TRUE"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := On(c.cfg, env(c.env)); got != c.want {
				t.Errorf("On = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSignalSender(t *testing.T) {
	for _, c := range []struct {
		name, signal string
		cfg          Config
		env          map[string]string
		url          string
		grpc         bool
	}{
		{"default HTTP", "traces", Config{}, nil, "http://localhost:4318/v1/traces", false},
		{"default gRPC", "metrics", Config{Protocol: ProtocolGRPC}, nil, "http://localhost:4317/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", true},
		{"the setting's base URL", "metrics", Config{Endpoint: "https://otel.example/base/"}, nil, "https://otel.example/base/v1/metrics", false},
		{"the variable wins over the setting", "traces", Config{Endpoint: "http://setting:1"},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://var:2"}, "http://var:2/v1/traces", false},
		{"a signal's endpoint is used as given", "traces", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://var:2", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:3/custom"}, "http://t:3/custom", false},
		{"the protocol variable wins", "traces", Config{Protocol: ProtocolHTTP},
			map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, "http://c:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := signalSender(c.cfg, env(c.env), c.signal)
			if err != nil {
				t.Fatal(err)
			}
			if s.url != c.url || s.grpc != c.grpc {
				t.Errorf("url %s grpc %v, want %s %v", s.url, s.grpc, c.url, c.grpc)
			}
		})
	}
}

// TestBadConfigNamesNoSecret: a malformed header or endpoint is refused
// without quoting it (either may hold a token).
func TestBadConfigNamesNoSecret(t *testing.T) {
	const token = "tok-SECRET-123"
	for _, c := range []struct {
		name string
		env  map[string]string
	}{
		{"header without =", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization " + token}},
		{"endpoint without scheme", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "user:" + token + "@host"}},
		{"unknown protocol", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{"credentials in the URL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:" + token + "@collector.example"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Setup(context.Background(), Config{Enabled: true}, env(c.env), "test")
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), token) || !strings.HasPrefix(err.Error(), "telemetry: ") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestExportBodies: what Shutdown flushes reaches the collector's URLs as
// OTLP protobuf with the headers of the variables, the fleet's waits among
// the metrics.
func TestExportBodies(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	auth := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], b...)
		auth[r.URL.Path] = r.Header.Get("Authorization") + " " + r.Header.Get("Content-Type")
		mu.Unlock()
	}))
	defer srv.Close()
	tel, err := Setup(context.Background(), Config{}, env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20t1",
		"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}), "v9")
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tel.TracerProvider.Tracer("x").Start(context.Background(), "a span")
	if !sp.SpanContext().IsValid() || sp.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("span %v is not in TRACEPARENT's trace", sp.SpanContext())
	}
	sp.End()
	tel.FleetWait("acme", "m", "cooldown", 3*time.Second)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string][]string{
		"/v1/traces":  {"a span", "service.name", "rally", "v9"},
		"/v1/metrics": {"rally.fleet.gate.waits", "rally.fleet.gate.wait.duration", "cooldown"},
	} {
		for _, w := range want {
			if !bytes.Contains(got[path], []byte(w)) {
				t.Errorf("%s: no %q in %d bytes", path, w, len(got[path]))
			}
		}
		if auth[path] != "Bearer t1 application/x-protobuf" {
			t.Errorf("%s: headers %q", path, auth[path])
		}
	}
}

// TestExporterNone: OTEL_TRACES_EXPORTER=none keeps the metrics and drops
// the traces, and the other way round.
func TestExporterNone(t *testing.T) {
	for _, c := range []struct {
		key             string
		traces, metrics bool
	}{{"OTEL_TRACES_EXPORTER", false, true}, {"OTEL_METRICS_EXPORTER", true, false}} {
		t.Run(c.key, func(t *testing.T) {
			tel, err := Setup(context.Background(), Config{Enabled: true}, env(map[string]string{c.key: "none"}), "test")
			if err != nil {
				t.Fatal(err)
			}
			defer tel.Shutdown(context.Background())
			if (tel.TracerProvider != nil) != c.traces || (tel.MeterProvider != nil) != c.metrics {
				t.Errorf("traces %v metrics %v, want %v %v", tel.TracerProvider != nil, tel.MeterProvider != nil, c.traces, c.metrics)
			}
		})
	}
}

// TestExportErrorHidesQuery: a failed export names the collector without
// the URL's query, where a token may have been put.
func TestExportErrorHidesQuery(t *testing.T) {
	const token = "tok-SECRET-456"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	tel, err := Setup(context.Background(), Config{}, env(map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces?key=" + token, "OTEL_METRICS_EXPORTER": "none"}), "test")
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tel.TracerProvider.Tracer("x").Start(context.Background(), "a span")
	sp.End()
	err = tel.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), token) {
		t.Errorf("flush error %v, want HTTP 401 without the token", err)
	}
}
