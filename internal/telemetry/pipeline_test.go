package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// spanSink collects what a tracerProvider exports.
type spanSink struct {
	mu    sync.Mutex
	spans []*span
}

func (s *spanSink) export(_ context.Context, b []*span) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, b...)
	return nil
}

func (s *spanSink) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sp := range s.spans {
		out = append(out, sp.name)
	}
	return out
}

// TestSpanIDsAndParents: ids are valid and distinct, a child is in its
// parent's trace under its span, a remote parent (TRACEPARENT's) is
// followed and marked remote, an unsampled one makes a span that records
// nothing, and a new root starts a trace of its own.
func TestSpanIDsAndParents(t *testing.T) {
	sink := &spanSink{}
	tp := newTracerProvider(resource{}, sink.export)
	tr := tp.Tracer("test", trace.WithInstrumentationVersion("v1"))
	seen := map[string]bool{}
	for range 1000 {
		_, sp := tr.Start(context.Background(), "root")
		sc := sp.SpanContext()
		if !sc.IsValid() || !sc.IsSampled() || seen[sc.TraceID().String()] || seen[sc.SpanID().String()] {
			t.Fatalf("span context %v: invalid, unsampled or repeated", sc)
		}
		seen[sc.TraceID().String()], seen[sc.SpanID().String()] = true, true
	}
	ctx, parent := tr.Start(context.Background(), "parent")
	_, child := tr.Start(ctx, "child", trace.WithSpanKind(trace.SpanKindClient))
	c := child.(*span)
	if c.sc.TraceID() != parent.SpanContext().TraceID() || c.parent.SpanID() != parent.SpanContext().SpanID() || c.parent.IsRemote() {
		t.Errorf("child %v parent %v, want under the local parent %v", c.sc, c.parent, parent.SpanContext())
	}
	if c.kind != trace.SpanKindClient || parent.(*span).kind != trace.SpanKindInternal {
		t.Errorf("kinds %v %v, want client and internal (the default)", c.kind, parent.(*span).kind)
	}
	_, root := tr.Start(ctx, "root", trace.WithNewRoot())
	if root.SpanContext().TraceID() == parent.SpanContext().TraceID() || root.(*span).parent.IsValid() {
		t.Errorf("WithNewRoot kept the context's trace")
	}

	for _, tc := range []struct {
		name, traceparent string
		recording         bool
	}{
		{"sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tc.traceparent})
			_, sp := tr.Start(rctx, "remote child "+tc.name)
			s := sp.(*span)
			if s.sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.parent.SpanID().String() != "00f067aa0ba902b7" || !s.parent.IsRemote() {
				t.Errorf("span %v parent %v, want under TRACEPARENT's remote span", s.sc, s.parent)
			}
			if sp.IsRecording() != tc.recording {
				t.Errorf("recording %v, want %v", sp.IsRecording(), tc.recording)
			}
			sp.End()
		})
	}
	child.End()
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sink.names(), ",")
	if strings.Contains(got, "not sampled") || !strings.Contains(got, "remote child sampled,child,parent") {
		t.Errorf("exported %s, want the sampled remote child, the child and the parent", got)
	}
}

// TestSpanLimitsAndStatus: a span keeps spanAttrLimit attributes (a key
// set again takes the new value and costs nothing), counts the rest,
// follows the status rules, and changes nothing once ended.
func TestSpanLimitsAndStatus(t *testing.T) {
	sink := &spanSink{}
	tp := newTracerProvider(resource{}, sink.export)
	_, sp := tp.Tracer("test").Start(context.Background(), "s", trace.WithAttributes(attribute.Int("k0", -1)))
	for i := range spanAttrLimit + 72 {
		sp.SetAttributes(attribute.Int(fmt.Sprintf("k%d", i), i))
	}
	sp.SetAttributes(attribute.Int("k0", 42))
	sp.SetStatus(codes.Error, "model call failed")
	sp.SetStatus(codes.Unset, "")
	sp.End()
	sp.SetAttributes(attribute.String("late", "x"))
	sp.SetStatus(codes.Ok, "")
	sp.SetName("renamed")
	sp.End() // a second End exports nothing more
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.spans) != 1 {
		t.Fatalf("%d spans exported, want 1", len(sink.spans))
	}
	s := sink.spans[0]
	if len(s.attrs) != spanAttrLimit || s.droppedAttrs != 72 || s.attrs[0].Value.AsInt64() != 42 {
		t.Errorf("%d attributes, %d dropped, k0=%v; want %d, 72, 42", len(s.attrs), s.droppedAttrs, s.attrs[0].Value, spanAttrLimit)
	}
	if s.code != codes.Error || s.desc != "model call failed" || s.name != "s" {
		t.Errorf("status %v %q name %q after End, want the error set before", s.code, s.desc, s.name)
	}

	for _, tc := range []struct {
		name  string
		set   []codes.Code
		want  codes.Code
		wantD string
	}{
		{"ok is final", []codes.Code{codes.Ok, codes.Error}, codes.Ok, ""},
		{"error then ok", []codes.Code{codes.Error, codes.Ok}, codes.Ok, ""},
		{"unset changes nothing", []codes.Code{codes.Error, codes.Unset}, codes.Error, "d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &span{}
			for _, c := range tc.set {
				s.SetStatus(c, "d")
			}
			if s.code != tc.want || s.desc != tc.wantD {
				t.Errorf("status %v %q, want %v %q", s.code, s.desc, tc.want, tc.wantD)
			}
		})
	}
}

// TestQueueFullDrops: with the collector stuck on a batch, ended spans
// fill the queue and the rest are dropped and counted; End never waits.
// Shutdown then exports what was queued.
func TestQueueFullDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		exported := 0
		tp := newTracerProvider(resource{}, func(_ context.Context, b []*span) error {
			<-release
			mu.Lock()
			exported += len(b)
			mu.Unlock()
			return nil
		})
		tr := tp.Tracer("test")
		end := func(n int) {
			for range n {
				_, sp := tr.Start(context.Background(), "s")
				sp.End()
			}
		}
		end(batchSize) // a full batch: the export goroutine takes it and sticks
		synctest.Wait()
		end(queueSize + 5)
		if got := tp.dropped.Load(); got != 5 {
			t.Errorf("dropped %d, want 5", got)
		}
		close(release)
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if exported != batchSize+queueSize {
			t.Errorf("exported %d, want %d", exported, batchSize+queueSize)
		}
		end(1) // after Shutdown: dropped, not queued
		if got := tp.dropped.Load(); got != 6 {
			t.Errorf("dropped %d after Shutdown, want 6", got)
		}
	})
}

// TestBatchDelay: fewer spans than a batch go out after batchDelay, not
// only at Shutdown.
func TestBatchDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &spanSink{}
		tp := newTracerProvider(resource{}, sink.export)
		_, sp := tp.Tracer("test").Start(context.Background(), "s")
		sp.End()
		time.Sleep(batchDelay - time.Millisecond)
		synctest.Wait()
		if n := len(sink.names()); n != 0 {
			t.Errorf("%d spans exported before batchDelay", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := len(sink.names()); n != 1 {
			t.Errorf("%d spans exported at batchDelay, want 1", n)
		}
		tp.Shutdown(context.Background())
	})
}

// TestShutdownBounded: a collector that never answers holds Shutdown for
// FlushTimeout and no longer, on the fake clock.
func TestShutdownBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stuck := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		tp := newTracerProvider(resource{}, func(ctx context.Context, _ []*span) error { return stuck(ctx) })
		mp := newMeterProvider(resource{}, time.Hour, func(ctx context.Context, _ []scopeMetrics) error { return stuck(ctx) })
		tel := &Telemetry{shutdown: []func(context.Context) error{tp.Shutdown, mp.Shutdown}, tp: tp}
		_, sp := tp.Tracer("test").Start(context.Background(), "s")
		sp.End()
		start := time.Now()
		err := tel.Shutdown(context.Background())
		if took := time.Since(start); took != FlushTimeout+250*time.Millisecond {
			t.Errorf("Shutdown took %s, want %s", took, FlushTimeout+250*time.Millisecond)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown: %v, want the deadline", err)
		}
	})
}

// TestConcurrentUse runs spans and instruments from many goroutines with
// a collection going on (for -race), and checks nothing was lost.
func TestConcurrentUse(t *testing.T) {
	sink := &spanSink{}
	tp := newTracerProvider(resource{}, sink.export)
	ms := &metricSink{}
	mp := newMeterProvider(resource{}, time.Hour, ms.export)
	c, _ := mp.Meter("m").Int64Counter("c")
	h, _ := mp.Meter("m").Float64Histogram("h")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				ctx, sp := tp.Tracer("t").Start(context.Background(), "s")
				sp.SetAttributes(attribute.Int("i", i))
				_, child := tp.Tracer("t").Start(ctx, "c")
				child.SetStatus(codes.Error, "x")
				child.End()
				sp.End()
				by := metric.WithAttributes(attribute.Int("g", g%2))
				c.Add(ctx, 1, by)
				h.Record(ctx, float64(i), by)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			mp.collect()
		}
	})
	wg.Wait()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := mp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.names()); n != 1600 {
		t.Errorf("%d spans exported, want 1600", n)
	}
	if got := ms.last()["c{g=0}"] + ms.last()["c{g=1}"]; got != 800 {
		t.Errorf("counter total %v, want 800", got)
	}
}

// TestShutdownDuringExport: a periodic export stuck on a collector when
// Shutdown comes holds Shutdown only until its deadline.
func TestShutdownDuringExport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unstick := make(chan struct{})
		defer close(unstick)
		started := make(chan struct{}, 1)
		mp := newMeterProvider(resource{}, time.Second, func(context.Context, []scopeMetrics) error {
			select {
			case started <- struct{}{}:
			default:
			}
			<-unstick
			return nil
		})
		time.Sleep(time.Second)
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
		defer cancel()
		start := time.Now()
		if err := mp.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown: %v, want the deadline", err)
		}
		if took := time.Since(start); took != FlushTimeout {
			t.Errorf("Shutdown took %s, want %s", took, FlushTimeout)
		}
	})
}
