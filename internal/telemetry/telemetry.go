// Package telemetry sets up OpenTelemetry export for a rally process from
// the standard OTEL_* variables and the telemetry.* settings: OTLP over
// HTTP or gRPC, traces and metrics, a TRACEPARENT parent, and a flush
// bounded in time at exit. The instrumentation itself is the session's
// (session.Config's providers); this package only builds them.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Protocols of telemetry.protocol and OTEL_EXPORTER_OTLP_PROTOCOL.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// FlushTimeout bounds the flush at exit: a dead collector must not keep
// the command line waiting.
const FlushTimeout = 2 * time.Second

// Config is the telemetry.* settings.
type Config struct {
	Enabled        bool
	Endpoint       string // base URL of the collector; "" means the variables' or the default
	Protocol       string // ProtocolHTTP (default) or ProtocolGRPC
	CaptureContent bool
}

// Telemetry is a process's export: the providers for session.Config and
// Shutdown, which flushes them.
type Telemetry struct {
	TracerProvider trace.TracerProvider // nil when traces are off
	MeterProvider  metric.MeterProvider // nil when metrics are off
	CaptureContent bool
	shutdown       []func(context.Context) error
	tp             *tracerProvider // for Dropped
	senders        []*sender
	// The fleet's instruments: the gate runs below the session, in the
	// composition root's wiring, so they are made here.
	fleetWaits metric.Int64Counter
	fleetWait  metric.Float64Histogram
}

// FleetWait counts one request the fleet held back for delay (reason is
// fleet.Wait's: cooldown, breaker, probe, budget). A nil Telemetry does
// nothing.
func (t *Telemetry) FleetWait(provider, model, reason string, delay time.Duration) {
	if t == nil || t.fleetWaits == nil {
		return
	}
	by := metric.WithAttributes(attribute.String("rally.provider", provider), attribute.String("rally.model", model),
		attribute.String("rally.fleet.wait.reason", reason))
	t.fleetWaits.Add(context.Background(), 1, by)
	t.fleetWait.Record(context.Background(), delay.Seconds(), by)
}

// On reports whether telemetry is wanted: telemetry.enabled, or an OTLP
// endpoint or exporter named in the environment; OTEL_SDK_DISABLED=true
// turns it off whatever else says.
func On(c Config, getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if c.Enabled {
		return true
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if getenv(k) != "" {
			return true
		}
	}
	return getenv("OTEL_TRACES_EXPORTER") == "otlp" || getenv("OTEL_METRICS_EXPORTER") == "otlp"
}

// Setup builds the export for c, or returns nil when telemetry is off
// (then nothing is started). version is service.version. A variable wins
// over a setting. The providers are rally's own (trace.go, metric.go),
// not the OpenTelemetry SDK's, so that a rally binary with telemetry off
// does not carry the SDK's memory and start-up cost.
func Setup(ctx context.Context, c Config, getenv func(string) string, version string) (*Telemetry, error) {
	if !On(c, getenv) {
		return nil, nil
	}
	res, err := newResource(getenv, version)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	t := &Telemetry{CaptureContent: c.CaptureContent}
	if exporter(getenv, "OTEL_TRACES_EXPORTER") {
		snd, err := signalSender(c, getenv, "traces")
		if err != nil {
			return nil, err
		}
		t.senders = append(t.senders, snd)
		tp := newTracerProvider(res, func(ctx context.Context, spans []*span) error { return snd.send(ctx, traceRequest(res, spans)) })
		t.shutdown = append(t.shutdown, tp.Shutdown)
		t.tp = tp
		t.TracerProvider = withParent(tp, envParent(getenv))
	}
	if exporter(getenv, "OTEL_METRICS_EXPORTER") {
		snd, err := signalSender(c, getenv, "metrics")
		if err != nil {
			return nil, err
		}
		t.senders = append(t.senders, snd)
		mp := newMeterProvider(res, interval(getenv("OTEL_METRIC_EXPORT_INTERVAL")),
			func(ctx context.Context, sms []scopeMetrics) error { return snd.send(ctx, metricsRequest(res, sms)) })
		t.shutdown = append(t.shutdown, mp.Shutdown)
		t.MeterProvider = mp
		m := mp.Meter("github.com/rally-agent/rally/fleet")
		t.fleetWaits, _ = m.Int64Counter("rally.fleet.gate.waits", metric.WithUnit("{wait}"), metric.WithDescription("Requests the fleet held back."))
		t.fleetWait, _ = m.Float64Histogram("rally.fleet.gate.wait.duration", metric.WithUnit("s"), metric.WithDescription("How long the fleet asked a request to wait."))
	}
	return t, nil
}

// exporter reports whether the signal's exporter variable leaves OTLP on:
// unset or "otlp"; "none" (or anything else, which rally cannot export
// to) turns the signal off.
func exporter(getenv func(string) string, key string) bool {
	v := getenv(key)
	return v == "" || v == "otlp"
}

// signalSender is the sender of signal ("traces", "metrics") by the
// OTLP exporter variables' rules: the signal's own endpoint as it is,
// else a base URL (OTEL_EXPORTER_OTLP_ENDPOINT, then telemetry.endpoint,
// then localhost's port 4318 or 4317) with /v1/<signal> after it over
// HTTP; headers and protocol likewise, the signal's own first.
func signalSender(c Config, getenv func(string) string, signal string) (*sender, error) {
	sig := strings.ToUpper(signal)
	proto := first(getenv("OTEL_EXPORTER_OTLP_"+sig+"_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), c.Protocol, ProtocolHTTP)
	if proto != ProtocolHTTP && proto != ProtocolGRPC {
		return nil, fmt.Errorf("telemetry: protocol %q: rally exports %s or %s", proto, ProtocolHTTP, ProtocolGRPC)
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT")
	if endpoint == "" {
		def := "http://localhost:4318"
		if proto == ProtocolGRPC {
			def = "http://localhost:4317"
		}
		endpoint = first(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), c.Endpoint, def)
		if proto == ProtocolHTTP {
			endpoint = strings.TrimSuffix(endpoint, "/") + "/v1/" + signal
		}
	}
	h, err := headers(getenv("OTEL_EXPORTER_OTLP_HEADERS"))
	if err != nil {
		return nil, err
	}
	own, err := headers(getenv("OTEL_EXPORTER_OTLP_" + sig + "_HEADERS"))
	if err != nil {
		return nil, err
	}
	for k, v := range own {
		h[k] = v
	}
	d := timeout(first(getenv("OTEL_EXPORTER_OTLP_"+sig+"_TIMEOUT"), getenv("OTEL_EXPORTER_OTLP_TIMEOUT")))
	return newSender(proto, endpoint, signal, h, d)
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// interval is OTEL_METRIC_EXPORT_INTERVAL (milliseconds), by default the
// SDK's minute.
func interval(v string) time.Duration {
	ms, err := strconv.Atoi(v)
	if err != nil || ms <= 0 {
		return defaultInterval
	}
	return time.Duration(ms) * time.Millisecond
}

// Shutdown flushes what is buffered and stops the export, within a
// little more than FlushTimeout; a collector that does not answer loses
// the rest.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	// A little past the exports' own timeout, so that a collector that
	// does not answer fails the export (with its address) before the
	// flush gives up; the signals flush side by side.
	ctx, cancel := context.WithTimeout(ctx, FlushTimeout+250*time.Millisecond)
	defer cancel()
	stopped := make([]error, len(t.shutdown))
	var wg sync.WaitGroup
	for i, f := range t.shutdown {
		wg.Go(func() { stopped[i] = f(ctx) })
	}
	wg.Wait()
	// What the last export of each signal said, else what stopping did
	// (a stop returns its export's error, the same one).
	var errs []error
	for _, s := range t.senders {
		if err := s.lastErr(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		errs = slices.DeleteFunc(stopped, func(err error) bool { return err == nil })
	}
	if n := t.Dropped(); n > 0 {
		errs = append(errs, fmt.Errorf("%d spans dropped: the export queue was full", n))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: flush at exit: %w", err)
	}
	return nil
}

// envParent is the span context TRACEPARENT (and TRACESTATE) names, the
// W3C way a CI job hands its trace to a program it starts; invalid when
// unset or malformed.
func envParent(getenv func(string) string) trace.SpanContext {
	c := propagation.MapCarrier{"traceparent": getenv("TRACEPARENT"), "tracestate": getenv("TRACESTATE")}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

// withParent makes parent the parent of every span started without one,
// so the whole run joins the trace that started the process.
func withParent(tp trace.TracerProvider, parent trace.SpanContext) trace.TracerProvider {
	if !parent.IsValid() {
		return tp
	}
	return parented{tp: tp, parent: parent}
}

type parented struct {
	embedded.TracerProvider
	tp     trace.TracerProvider
	parent trace.SpanContext
}

func (p parented) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return parentedTracer{t: p.tp.Tracer(name, opts...), parent: p.parent}
}

type parentedTracer struct {
	embedded.Tracer
	t      trace.Tracer
	parent trace.SpanContext
}

func (p parentedTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, p.parent)
	}
	return p.t.Start(ctx, name, opts...)
}

// Dropped is how many ended spans the export queue had no room for (a
// collector slower than the agent): they are lost, not waited for.
func (t *Telemetry) Dropped() int64 {
	if t == nil || t.tp == nil {
		return 0
	}
	return t.tp.dropped.Load()
}
