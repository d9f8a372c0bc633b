package telemetry

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
)

// rally's own meter, for the reason trace.go gives: the instruments rally
// uses (Int64Counter, Int64Histogram, Float64Histogram), cumulative,
// aggregated per attribute set, exported every interval and at Shutdown.
// The meter's other constructors are the API's no-op instruments.

// defaultInterval is the SDK's default export interval
// (OTEL_METRIC_EXPORT_INTERVAL).
const defaultInterval = 60 * time.Second

// defaultBounds are the SDK's default histogram boundaries.
var defaultBounds = []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

type meterProvider struct {
	embedded.MeterProvider
	res    resource
	start  time.Time // the start of every cumulative point
	export func(context.Context, []scopeMetrics) error

	mu     sync.Mutex
	meters map[scope]*meter

	w *worker // exports the totals every interval
}

// newMeterProvider starts the provider's periodic export; Shutdown stops
// it.
func newMeterProvider(res resource, interval time.Duration, export func(context.Context, []scopeMetrics) error) *meterProvider {
	p := &meterProvider{res: res, start: time.Now(), export: export, meters: map[scope]*meter{}}
	p.w = startWorker(interval, func() {
		_ = p.export(context.Background(), p.collect()) // the sender keeps the error for Shutdown
	})
	return p
}

func (p *meterProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	c := metric.NewMeterConfig(opts...)
	sc := scope{name: name, version: c.InstrumentationVersion(), schemaURL: c.SchemaURL()}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.meters[sc]
	if m == nil {
		m = &meter{p: p, scope: sc}
		p.meters[sc] = m
	}
	return m
}

// Shutdown stops the periodic export and exports the totals once more,
// within ctx.
func (p *meterProvider) Shutdown(ctx context.Context) error {
	if err := p.w.halt(ctx); err != nil {
		return err
	}
	return p.export(ctx, p.collect())
}

// scopeMetrics is one scope's instruments as of a collection.
type scopeMetrics struct {
	scope   scope
	metrics []metricData
}

// metricData is one instrument's points: a monotonic int sum, or a
// histogram (ints or floats, encoded alike).
type metricData struct {
	name, desc, unit string
	histogram        bool
	points           []point
}

// point is one attribute set's cumulative value.
type point struct {
	attrs    attribute.Set
	start    time.Time
	time     time.Time
	sum      float64 // a counter's value, a histogram's sum
	isInt    bool
	count    uint64
	bounds   []float64
	buckets  []uint64
	min, max float64
}

func (p *meterProvider) collect() []scopeMetrics {
	now := time.Now()
	p.mu.Lock()
	meters := make([]*meter, 0, len(p.meters))
	for _, m := range p.meters {
		meters = append(meters, m)
	}
	p.mu.Unlock()
	slices.SortFunc(meters, func(a, b *meter) int { return compareScope(a.scope, b.scope) })
	var out []scopeMetrics
	for _, m := range meters {
		sm := scopeMetrics{scope: m.scope}
		for _, in := range m.instruments() {
			if d := in.snapshot(p.start, now); len(d.points) > 0 {
				sm.metrics = append(sm.metrics, d)
			}
		}
		if len(sm.metrics) > 0 {
			out = append(out, sm)
		}
	}
	return out
}

func compareScope(a, b scope) int {
	if a.name != b.name {
		if a.name < b.name {
			return -1
		}
		return 1
	}
	if a.version < b.version {
		return -1
	}
	if a.version > b.version {
		return 1
	}
	return 0
}

type meter struct {
	noop.Meter // the constructors rally does not use: no-op instruments
	p          *meterProvider
	scope      scope

	mu    sync.Mutex
	insts []*instrument
}

func (m *meter) instruments() []*instrument {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.insts)
}

// instrument returns the meter's instrument of that name and kind, made
// on first use: asking twice gives the same totals, as the SDK does.
func (m *meter) instrument(name, desc, unit string, histogram, isInt bool, bounds []float64) *instrument {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range m.insts {
		if in.name == name && in.histogram == histogram && in.isInt == isInt {
			return in
		}
	}
	if histogram && bounds == nil {
		bounds = defaultBounds
	}
	in := &instrument{name: name, desc: desc, unit: unit, histogram: histogram, isInt: isInt,
		bounds: slices.Clone(bounds), points: map[attribute.Distinct]*point{}}
	sort.Float64s(in.bounds)
	m.insts = append(m.insts, in)
	return in
}

func (m *meter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c := metric.NewInt64CounterConfig(opts...)
	return int64Counter{in: m.instrument(name, c.Description(), c.Unit(), false, true, nil)}, nil
}

func (m *meter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	c := metric.NewInt64HistogramConfig(opts...)
	return int64Histogram{in: m.instrument(name, c.Description(), c.Unit(), true, true, c.ExplicitBucketBoundaries())}, nil
}

func (m *meter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	c := metric.NewFloat64HistogramConfig(opts...)
	return float64Histogram{in: m.instrument(name, c.Description(), c.Unit(), true, false, c.ExplicitBucketBoundaries())}, nil
}

// instrument aggregates one instrument's measurements per attribute set.
type instrument struct {
	name, desc, unit string
	histogram, isInt bool
	bounds           []float64

	mu     sync.Mutex
	points map[attribute.Distinct]*point
}

func (in *instrument) point(attrs attribute.Set) *point {
	pt := in.points[attrs.Equivalent()]
	if pt == nil {
		pt = &point{attrs: attrs, isInt: in.isInt}
		if in.histogram {
			pt.bounds, pt.buckets = in.bounds, make([]uint64, len(in.bounds)+1)
		}
		in.points[attrs.Equivalent()] = pt
	}
	return pt
}

func (in *instrument) add(v float64, attrs attribute.Set) {
	in.mu.Lock()
	in.point(attrs).sum += v
	in.mu.Unlock()
}

// record counts v in the bucket of the first bound at or above it
// (buckets are upper-inclusive, as OTLP's explicit bounds say).
func (in *instrument) record(v float64, attrs attribute.Set) {
	in.mu.Lock()
	defer in.mu.Unlock()
	pt := in.point(attrs)
	if pt.count == 0 || v < pt.min {
		pt.min = v
	}
	if pt.count == 0 || v > pt.max {
		pt.max = v
	}
	pt.count++
	pt.sum += v
	pt.buckets[sort.SearchFloat64s(in.bounds, v)]++
}

// snapshot copies the totals, in a stable order.
func (in *instrument) snapshot(start, now time.Time) metricData {
	in.mu.Lock()
	defer in.mu.Unlock()
	d := metricData{name: in.name, desc: in.desc, unit: in.unit, histogram: in.histogram}
	for _, pt := range in.points {
		c := *pt
		c.start, c.time, c.buckets = start, now, slices.Clone(pt.buckets)
		d.points = append(d.points, c)
	}
	slices.SortFunc(d.points, func(a, b point) int {
		ea, eb := a.attrs.Encoded(attribute.DefaultEncoder()), b.attrs.Encoded(attribute.DefaultEncoder())
		if ea < eb {
			return -1
		}
		if ea > eb {
			return 1
		}
		return 0
	})
	return d
}

type int64Counter struct {
	embedded.Int64Counter
	in *instrument
}

// Add counts incr; a negative one is refused, as a counter only grows.
func (c int64Counter) Add(_ context.Context, incr int64, opts ...metric.AddOption) {
	if incr < 0 {
		return
	}
	c.in.add(float64(incr), metric.NewAddConfig(opts).Attributes())
}

func (int64Counter) Enabled(context.Context) bool { return true }

type int64Histogram struct {
	embedded.Int64Histogram
	in *instrument
}

func (h int64Histogram) Record(_ context.Context, v int64, opts ...metric.RecordOption) {
	h.in.record(float64(v), metric.NewRecordConfig(opts).Attributes())
}

func (int64Histogram) Enabled(context.Context) bool { return true }

type float64Histogram struct {
	embedded.Float64Histogram
	in *instrument
}

func (h float64Histogram) Record(_ context.Context, v float64, opts ...metric.RecordOption) {
	h.in.record(v, metric.NewRecordConfig(opts).Attributes())
}

func (float64Histogram) Enabled(context.Context) bool { return true }
