package telemetry

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protobuf messages, written by hand with the wire format's few
// rules (opentelemetry-proto's trace.proto, metrics.proto, common.proto;
// field numbers below). Why not the generated code of
// go.opentelemetry.io/proto/otlp and the official exporters: linking them
// (protobuf's registry, gRPC) costs every rally process ~240 KB and 1,600
// allocations at start, telemetry on or off; this costs nothing until
// used. The end-to-end test sends it to a real Collector, which decodes it.

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// enc appends protobuf fields to a buffer.
type enc struct{ b []byte }

func (e *enc) tag(field, wire int) { e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire)) }

func (e *enc) varint(field int, v uint64) {
	if v == 0 {
		return // proto3: a zero scalar is not written
	}
	e.tag(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

func (e *enc) fixed64(field int, v uint64) {
	if v == 0 {
		return
	}
	e.tag(field, wireFixed64)
	e.b = binary.LittleEndian.AppendUint64(e.b, v)
}

// double writes v even when 0 (for optional fields: sum, min, max).
func (e *enc) double(field int, v float64) {
	e.tag(field, wireFixed64)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

func (e *enc) bytes(field int, v []byte) {
	if len(v) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *enc) str(field int, v string) {
	if v == "" {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// msg writes a nested message that body fills (always, even empty: an
// empty AnyValue or Status still says something).
func (e *enc) msg(field int, body func(*enc)) {
	var inner enc
	body(&inner)
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(inner.b)))
	e.b = append(e.b, inner.b...)
}

func unixNano(t interface{ UnixNano() int64 }) uint64 { return uint64(t.UnixNano()) }

// keyValues writes common.proto KeyValue{key=1, value=2 AnyValue}.
func keyValues(e *enc, field int, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		e.msg(field, func(e *enc) {
			e.str(1, string(kv.Key))
			e.msg(2, func(e *enc) { anyValue(e, kv.Value) })
		})
	}
}

// anyValue writes AnyValue{string=1, bool=2, int=3, double=4, array=5}.
func anyValue(e *enc, v attribute.Value) {
	switch v.Type() {
	case attribute.STRING:
		e.tag(1, wireBytes)
		s := v.AsString()
		e.b = binary.AppendUvarint(e.b, uint64(len(s)))
		e.b = append(e.b, s...)
	case attribute.BOOL:
		e.tag(2, wireVarint)
		var b uint64
		if v.AsBool() {
			b = 1
		}
		e.b = binary.AppendUvarint(e.b, b)
	case attribute.INT64:
		e.tag(3, wireVarint)
		e.b = binary.AppendUvarint(e.b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.double(4, v.AsFloat64())
	case attribute.STRINGSLICE:
		e.msg(5, func(e *enc) {
			for _, s := range v.AsStringSlice() {
				e.msg(1, func(e *enc) { anyValue(e, attribute.StringValue(s)) })
			}
		})
	default: // other slices: their text form, rather than nothing
		e.str(1, v.Emit())
	}
}

func resourceMsg(e *enc, field int, r *resource.Resource) {
	e.msg(field, func(e *enc) { keyValues(e, 1, r.Attributes()) })
}

func scopeMsg(e *enc, field int, s instrumentation.Scope) {
	e.msg(field, func(e *enc) {
		e.str(1, s.Name)
		e.str(2, s.Version)
	})
}

// traceRequest is ExportTraceServiceRequest{resource_spans=1} for spans,
// grouped by resource and scope (one of each in rally, but any works).
func traceRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type group struct {
		res   *resource.Resource
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	var groups []*group
	for _, s := range spans {
		var g *group
		for _, c := range groups {
			if c.res == s.Resource() && c.scope == s.InstrumentationScope() {
				g = c
			}
		}
		if g == nil {
			g = &group{res: s.Resource(), scope: s.InstrumentationScope()}
			groups = append(groups, g)
		}
		g.spans = append(g.spans, s)
	}
	var e enc
	for _, g := range groups {
		e.msg(1, func(e *enc) { // ResourceSpans{resource=1, scope_spans=2, schema_url=3}
			resourceMsg(e, 1, g.res)
			e.msg(2, func(e *enc) { // ScopeSpans{scope=1, spans=2, schema_url=3}
				scopeMsg(e, 1, g.scope)
				for _, s := range g.spans {
					e.msg(2, func(e *enc) { span(e, s) })
				}
				e.str(3, g.scope.SchemaURL)
			})
			e.str(3, g.res.SchemaURL())
		})
	}
	return e.b
}

// span writes trace.proto Span.
func span(e *enc, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.bytes(1, tid[:])
	e.bytes(2, sid[:])
	e.str(3, sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		e.bytes(4, psid[:])
	}
	e.str(5, s.Name())
	e.varint(6, uint64(s.SpanKind())) // the SDK's kinds are the proto's numbers
	e.fixed64(7, unixNano(s.StartTime()))
	e.fixed64(8, unixNano(s.EndTime()))
	keyValues(e, 9, s.Attributes())
	e.varint(10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() { // Event{time=1, name=2, attributes=3}
		e.msg(11, func(e *enc) {
			e.fixed64(1, unixNano(ev.Time))
			e.str(2, ev.Name)
			keyValues(e, 3, ev.Attributes)
		})
	}
	st := s.Status()
	e.msg(15, func(e *enc) { // Status{message=2, code=3: 0 unset, 1 ok, 2 error}
		e.str(2, st.Description)
		switch st.Code {
		case codes.Ok:
			e.varint(3, 1)
		case codes.Error:
			e.varint(3, 2)
		}
	})
	// flags: the trace flags, and that the parent's remoteness is known
	// (bit 8) and whether it is remote (bit 9).
	flags := uint32(sc.TraceFlags()) | 1<<8
	if s.Parent().IsRemote() {
		flags |= 1 << 9
	}
	e.tag(16, wireFixed32)
	e.b = binary.LittleEndian.AppendUint32(e.b, flags)
}

// metricsRequest is ExportMetricsServiceRequest{resource_metrics=1}.
func metricsRequest(rm *metricdata.ResourceMetrics) []byte {
	var e enc
	e.msg(1, func(e *enc) { // ResourceMetrics{resource=1, scope_metrics=2, schema_url=3}
		resourceMsg(e, 1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			e.msg(2, func(e *enc) { // ScopeMetrics{scope=1, metrics=2, schema_url=3}
				scopeMsg(e, 1, sm.Scope)
				for _, m := range sm.Metrics {
					e.msg(2, func(e *enc) { metricMsg(e, m) })
				}
				e.str(3, sm.Scope.SchemaURL)
			})
		}
		e.str(3, rm.Resource.SchemaURL())
	})
	return e.b
}

// temporality is AggregationTemporality: 1 delta, 2 cumulative.
func temporality(t metricdata.Temporality) uint64 {
	if t == metricdata.DeltaTemporality {
		return 1
	}
	return 2
}

// metricMsg writes Metric{name=1, description=2, unit=3, gauge=5, sum=7,
// histogram=9}; the kinds rally's instruments make.
func metricMsg(e *enc, m metricdata.Metrics) {
	e.str(1, m.Name)
	e.str(2, m.Description)
	e.str(3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		e.msg(7, func(e *enc) { sum(e, d.DataPoints, d.Temporality, d.IsMonotonic) })
	case metricdata.Sum[float64]:
		e.msg(7, func(e *enc) { sum(e, d.DataPoints, d.Temporality, d.IsMonotonic) })
	case metricdata.Gauge[int64]:
		e.msg(5, func(e *enc) { points(e, d.DataPoints) })
	case metricdata.Gauge[float64]:
		e.msg(5, func(e *enc) { points(e, d.DataPoints) })
	case metricdata.Histogram[int64]:
		e.msg(9, func(e *enc) { histogram(e, d) })
	case metricdata.Histogram[float64]:
		e.msg(9, func(e *enc) { histogram(e, d) })
	}
}

// sum writes Sum{data_points=1, aggregation_temporality=2, is_monotonic=3}.
func sum[N int64 | float64](e *enc, dps []metricdata.DataPoint[N], t metricdata.Temporality, mono bool) {
	points(e, dps)
	e.varint(2, temporality(t))
	if mono {
		e.varint(3, 1)
	}
}

// points writes NumberDataPoint{start=2, time=3, as_double=4, as_int=6
// (sfixed64), attributes=7} as field 1 of its container.
func points[N int64 | float64](e *enc, dps []metricdata.DataPoint[N]) {
	for _, dp := range dps {
		e.msg(1, func(e *enc) {
			e.fixed64(2, unixNano(dp.StartTime))
			e.fixed64(3, unixNano(dp.Time))
			switch v := any(dp.Value).(type) {
			case int64:
				e.tag(6, wireFixed64)
				e.b = binary.LittleEndian.AppendUint64(e.b, uint64(v))
			case float64:
				e.double(4, v)
			}
			keyValues(e, 7, dp.Attributes.ToSlice())
		})
	}
}

// histogram writes Histogram{data_points=1, aggregation_temporality=2}
// with HistogramDataPoint{start=2, time=3, count=4, sum=5,
// bucket_counts=6, explicit_bounds=7, attributes=9, min=11, max=12}.
func histogram[N int64 | float64](e *enc, h metricdata.Histogram[N]) {
	for _, dp := range h.DataPoints {
		e.msg(1, func(e *enc) {
			e.fixed64(2, unixNano(dp.StartTime))
			e.fixed64(3, unixNano(dp.Time))
			e.fixed64(4, dp.Count)
			e.double(5, float64(dp.Sum))
			e.msg(6, func(e *enc) {
				for _, c := range dp.BucketCounts {
					e.b = binary.LittleEndian.AppendUint64(e.b, c)
				}
			})
			e.msg(7, func(e *enc) {
				for _, b := range dp.Bounds {
					e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(b))
				}
			})
			keyValues(e, 9, dp.Attributes.ToSlice())
			if v, ok := dp.Min.Value(); ok {
				e.double(11, float64(v))
			}
			if v, ok := dp.Max.Value(); ok {
				e.double(12, float64(v))
			}
		})
	}
	e.varint(2, temporality(h.Temporality))
}
