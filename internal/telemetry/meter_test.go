package telemetry

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// metricSink keeps every export of a meterProvider.
type metricSink struct {
	mu      sync.Mutex
	exports [][]scopeMetrics
}

func (s *metricSink) export(_ context.Context, sms []scopeMetrics) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exports = append(s.exports, sms)
	return nil
}

// last folds the last export into name{attrs}: value for sums, count for
// histograms.
func (s *metricSink) last() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]float64{}
	if len(s.exports) == 0 {
		return out
	}
	for _, sm := range s.exports[len(s.exports)-1] {
		for _, m := range sm.metrics {
			for _, p := range m.points {
				k := m.name + "{" + p.attrs.Encoded(attribute.DefaultEncoder()) + "}"
				if m.histogram {
					out[k] += float64(p.count)
				} else {
					out[k] += p.sum
				}
			}
		}
	}
	return out
}

// TestMeterAggregates: points are per attribute set and cumulative over
// exports, an instrument asked for twice is one, a counter ignores a
// negative increment, histogram buckets are upper-inclusive with min and
// max, and unused instruments export nothing.
func TestMeterAggregates(t *testing.T) {
	sink := &metricSink{}
	mp := newMeterProvider(resource{}, time.Hour, sink.export)
	m := mp.Meter("rally", metric.WithInstrumentationVersion("v1"))
	c1, _ := m.Int64Counter("rally.retry.attempts", metric.WithUnit("{attempt}"))
	c2, _ := mp.Meter("rally", metric.WithInstrumentationVersion("v1")).Int64Counter("rally.retry.attempts")
	h, _ := m.Float64Histogram("wait", metric.WithExplicitBucketBoundaries(1, 2, 4))
	hi, _ := m.Int64Histogram("tokens")
	_, _ = m.Int64Counter("unused")
	ctx := context.Background()
	a, b := metric.WithAttributes(attribute.String("class", "transient")), metric.WithAttributes(attribute.String("class", "usage_limit"))
	c1.Add(ctx, 2, a)
	c2.Add(ctx, 1, a)
	c1.Add(ctx, 1, b)
	c1.Add(ctx, -5, b)
	for _, v := range []float64{0.5, 1, 1.5, 4, 9} {
		h.Record(ctx, v)
	}
	hi.Record(ctx, 7)
	mp.collect()
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got := sink.last()
	for k, want := range map[string]float64{
		"rally.retry.attempts{class=transient}":   3,
		"rally.retry.attempts{class=usage_limit}": 1,
		"wait{}":   5,
		"tokens{}": 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("exported %v, want 4 points (nothing for unused)", got)
	}
	sm := sink.exports[0][0]
	if sm.scope.name != "rally" || sm.scope.version != "v1" || len(sm.metrics) != 3 {
		t.Fatalf("scope %+v with %d metrics, want rally v1 with 3", sm.scope, len(sm.metrics))
	}
	for _, md := range sm.metrics {
		p := md.points[0]
		switch md.name {
		case "rally.retry.attempts":
			if md.unit != "{attempt}" || md.histogram || !p.isInt || !p.start.Equal(mp.start) {
				t.Errorf("counter %+v", md)
			}
		case "wait":
			if !slices.Equal(p.bounds, []float64{1, 2, 4}) || !slices.Equal(p.buckets, []uint64{2, 1, 1, 1}) || p.min != 0.5 || p.max != 9 || p.sum != 16 {
				t.Errorf("histogram bounds %v buckets %v min %v max %v sum %v, want [1 2 4] [2 1 1 1] 0.5 9 16", p.bounds, p.buckets, p.min, p.max, p.sum)
			}
		case "tokens":
			if !slices.Equal(p.bounds, defaultBounds) || !sort.Float64sAreSorted(p.bounds) {
				t.Errorf("bounds %v, want the SDK's defaults", p.bounds)
			}
		}
	}
}

// TestMeterInterval: the totals go out every interval and once more at
// Shutdown.
func TestMeterInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &metricSink{}
		mp := newMeterProvider(resource{}, interval("1500"), sink.export)
		c, _ := mp.Meter("m").Int64Counter("c")
		c.Add(context.Background(), 1)
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		sink.mu.Lock()
		n := len(sink.exports)
		sink.mu.Unlock()
		if n != 2 {
			t.Errorf("%d exports in 3 s at 1.5 s, want 2", n)
		}
		mp.Shutdown(context.Background())
		if len(sink.exports) != 3 {
			t.Errorf("%d exports after Shutdown, want 3", len(sink.exports))
		}
	})
	if interval("") != defaultInterval || interval("x") != defaultInterval {
		t.Errorf("interval of unset or junk is not the default")
	}
}

// TestResource: the variables win over rally's defaults, values are
// URL-decoded, telemetry.sdk.name says rally's own pipeline, and a
// malformed pair is refused without quoting it.
func TestResource(t *testing.T) {
	r, err := newResource(env(map[string]string{
		"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs, deployment.environment.name=ci%20one,team=x",
		"OTEL_SERVICE_NAME":        "ci-agent",
	}), "v9")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range r.attrs {
		if _, dup := got[string(kv.Key)]; dup {
			t.Errorf("key %s twice", kv.Key)
		}
		got[string(kv.Key)] = kv.Value.Emit()
	}
	for k, want := range map[string]string{
		"service.name": "ci-agent", "service.version": "v9", "deployment.environment.name": "ci one", "team": "x",
		"telemetry.sdk.name": "rally", "telemetry.sdk.language": "go",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if _, err := newResource(env(map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "token-SECRET"}), "v"); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("malformed pair: %v, want an error without the pair", err)
	}
}
