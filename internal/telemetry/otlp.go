package telemetry

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

func resourceMsg(e *enc, field int, r resource) {
	e.msg(field, func(e *enc) { keyValues(e, 1, r.attrs) })
}

func scopeMsg(e *enc, field int, s scope) {
	e.msg(field, func(e *enc) {
		e.str(1, s.name)
		e.str(2, s.version)
	})
}

// traceRequest is ExportTraceServiceRequest{resource_spans=1} for spans
// of one resource, grouped by scope.
func traceRequest(res resource, spans []*span) []byte {
	type group struct {
		scope scope
		spans []*span
	}
	var groups []*group
	for _, s := range spans {
		var g *group
		for _, c := range groups {
			if c.scope == s.t.scope {
				g = c
			}
		}
		if g == nil {
			g = &group{scope: s.t.scope}
			groups = append(groups, g)
		}
		g.spans = append(g.spans, s)
	}
	var e enc
	e.msg(1, func(e *enc) { // ResourceSpans{resource=1, scope_spans=2, schema_url=3}
		resourceMsg(e, 1, res)
		for _, g := range groups {
			e.msg(2, func(e *enc) { // ScopeSpans{scope=1, spans=2, schema_url=3}
				scopeMsg(e, 1, g.scope)
				for _, s := range g.spans {
					e.msg(2, func(e *enc) { spanMsg(e, s) })
				}
				e.str(3, g.scope.schemaURL)
			})
		}
		e.str(3, res.schemaURL)
	})
	return e.b
}

// spanMsg writes trace.proto Span of an ended span (which nothing
// changes any more).
func spanMsg(e *enc, s *span) {
	sc := s.sc
	tid, sid := sc.TraceID(), sc.SpanID()
	e.bytes(1, tid[:])
	e.bytes(2, sid[:])
	e.str(3, sc.TraceState().String())
	if s.parent.IsValid() {
		psid := s.parent.SpanID()
		e.bytes(4, psid[:])
	}
	e.str(5, s.name)
	e.varint(6, uint64(s.kind)) // the API's kinds are the proto's numbers
	e.fixed64(7, unixNano(s.start))
	e.fixed64(8, unixNano(s.end))
	keyValues(e, 9, s.attrs)
	e.varint(10, uint64(s.droppedAttrs))
	for _, ev := range s.events { // Event{time=1, name=2, attributes=3}
		e.msg(11, func(e *enc) {
			e.fixed64(1, unixNano(ev.time))
			e.str(2, ev.name)
			keyValues(e, 3, ev.attrs)
		})
	}
	e.varint(12, uint64(s.droppedEvents))
	e.msg(15, func(e *enc) { // Status{message=2, code=3: 0 unset, 1 ok, 2 error}
		e.str(2, s.desc)
		switch s.code {
		case codes.Ok:
			e.varint(3, 1)
		case codes.Error:
			e.varint(3, 2)
		}
	})
	// flags: the trace flags, and that the parent's remoteness is known
	// (bit 8) and whether it is remote (bit 9).
	flags := uint32(sc.TraceFlags()) | 1<<8
	if s.parent.IsRemote() {
		flags |= 1 << 9
	}
	e.tag(16, wireFixed32)
	e.b = binary.LittleEndian.AppendUint32(e.b, flags)
}

// metricsRequest is ExportMetricsServiceRequest{resource_metrics=1}.
func metricsRequest(res resource, sms []scopeMetrics) []byte {
	var e enc
	e.msg(1, func(e *enc) { // ResourceMetrics{resource=1, scope_metrics=2, schema_url=3}
		resourceMsg(e, 1, res)
		for _, sm := range sms {
			e.msg(2, func(e *enc) { // ScopeMetrics{scope=1, metrics=2, schema_url=3}
				scopeMsg(e, 1, sm.scope)
				for _, m := range sm.metrics {
					e.msg(2, func(e *enc) { metricMsg(e, m) })
				}
				e.str(3, sm.scope.schemaURL)
			})
		}
		e.str(3, res.schemaURL)
	})
	return e.b
}

// cumulative is AggregationTemporality CUMULATIVE (1 is delta): rally's
// points are totals since the process started.
const cumulative = 2

// metricMsg writes Metric{name=1, description=2, unit=3, sum=7,
// histogram=9}; the kinds rally's instruments make.
func metricMsg(e *enc, m metricData) {
	e.str(1, m.name)
	e.str(2, m.desc)
	e.str(3, m.unit)
	if m.histogram {
		e.msg(9, func(e *enc) { histogram(e, m.points) })
		return
	}
	e.msg(7, func(e *enc) { // Sum{data_points=1, aggregation_temporality=2, is_monotonic=3}
		points(e, m.points)
		e.varint(2, cumulative)
		e.varint(3, 1)
	})
}

// points writes NumberDataPoint{start=2, time=3, as_double=4, as_int=6
// (sfixed64), attributes=7} as field 1 of its container.
func points(e *enc, pts []point) {
	for _, dp := range pts {
		e.msg(1, func(e *enc) {
			e.fixed64(2, unixNano(dp.start))
			e.fixed64(3, unixNano(dp.time))
			if dp.isInt {
				e.tag(6, wireFixed64)
				e.b = binary.LittleEndian.AppendUint64(e.b, uint64(int64(dp.sum)))
			} else {
				e.double(4, dp.sum)
			}
			keyValues(e, 7, dp.attrs.ToSlice())
		})
	}
}

// histogram writes Histogram{data_points=1, aggregation_temporality=2}
// with HistogramDataPoint{start=2, time=3, count=4, sum=5,
// bucket_counts=6, explicit_bounds=7, attributes=9, min=11, max=12}.
func histogram(e *enc, pts []point) {
	for _, dp := range pts {
		e.msg(1, func(e *enc) {
			e.fixed64(2, unixNano(dp.start))
			e.fixed64(3, unixNano(dp.time))
			e.fixed64(4, dp.count)
			e.double(5, dp.sum)
			e.msg(6, func(e *enc) {
				for _, c := range dp.buckets {
					e.b = binary.LittleEndian.AppendUint64(e.b, c)
				}
			})
			e.msg(7, func(e *enc) {
				for _, b := range dp.bounds {
					e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(b))
				}
			})
			keyValues(e, 9, dp.attrs.ToSlice())
			if dp.count > 0 {
				e.double(11, dp.min)
				e.double(12, dp.max)
			}
		})
	}
	e.varint(2, cumulative)
}
