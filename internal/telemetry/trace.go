package telemetry

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Why rally's own tracer and not the official SDK's (go.opentelemetry.io/
// otel/sdk/trace): linking the SDK costs every rally process, telemetry
// on or off, about half a MiB of resident memory, 1.9 MB of binary and
// the init work of 14 packages (docs/telemetry.md, "Cost"). The binary
// needs little of it: rally's instrumentation starts spans, sets
// attributes and status and ends them. So the binary exports through this
// small pipeline behind the official API, while the library (session.
// Config) takes any trace.TracerProvider, the SDK's included.

// Limits, the SDK's defaults: a span keeps at most spanAttrLimit
// attributes and spanEventLimit events (the rest are counted as dropped);
// at most queueSize ended spans wait for export (more are dropped and
// counted, never waited for), sent batchSize at a time, or every
// batchDelay.
const (
	spanAttrLimit  = 128
	spanEventLimit = 128
	queueSize      = 2048
	batchSize      = 512
	batchDelay     = 5 * time.Second
)

// scope is an instrumentation scope: the name and version a Tracer or
// Meter was asked for.
type scope struct{ name, version, schemaURL string }

// tracerProvider makes tracers whose ended spans go, in batches, to
// export.
type tracerProvider struct {
	embedded.TracerProvider
	res    resource
	export func(context.Context, []*span) error

	mu      sync.Mutex
	queue   []*span
	closed  bool
	dropped atomic.Int64 // spans dropped because the queue was full

	w *worker // exports a batch when one is full or batchDelay has passed
}

// newTracerProvider starts the provider's export goroutine; Shutdown
// stops it.
func newTracerProvider(res resource, export func(context.Context, []*span) error) *tracerProvider {
	p := &tracerProvider{res: res, export: export}
	p.w = startWorker(batchDelay, p.exportQueued)
	return p
}

func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	c := trace.NewTracerConfig(opts...)
	return &tracer{p: p, scope: scope{name: name, version: c.InstrumentationVersion(), schemaURL: c.SchemaURL()}}
}

// enqueue queues an ended span; a full queue drops it rather than make
// the agent wait for a slow collector.
func (p *tracerProvider) enqueue(s *span) {
	p.mu.Lock()
	if p.closed || len(p.queue) >= queueSize {
		p.mu.Unlock()
		p.dropped.Add(1)
		return
	}
	p.queue = append(p.queue, s)
	full := len(p.queue) >= batchSize
	p.mu.Unlock()
	if full {
		p.w.poke()
	}
}

// take removes up to batchSize queued spans.
func (p *tracerProvider) take() []*span {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(len(p.queue), batchSize)
	if n == 0 {
		return nil
	}
	b := p.queue[:n:n]
	p.queue = append([]*span(nil), p.queue[n:]...)
	return b
}

// exportQueued exports what is queued, a batch at a time.
func (p *tracerProvider) exportQueued() {
	for b := p.take(); b != nil; b = p.take() {
		_ = p.export(context.Background(), b) // the sender keeps the error for Shutdown
		if len(b) < batchSize {
			break
		}
	}
}

// Shutdown stops the export goroutine and exports what is queued, within
// ctx; spans ended later are dropped.
func (p *tracerProvider) Shutdown(ctx context.Context) error {
	if err := p.w.halt(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for b := p.take(); b != nil; b = p.take() {
		if err := p.export(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

type tracer struct {
	embedded.Tracer
	p     *tracerProvider
	scope scope
}

// Start starts a span whose parent is the context's span, local or
// remote (a TRACEPARENT's). A parent that was not sampled is followed:
// the new span records nothing, as the SDK's default sampler does.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	c := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if !c.NewRoot() {
		parent = trace.SpanContextFromContext(ctx)
	}
	scc := trace.SpanContextConfig{SpanID: newSpanID(), TraceFlags: trace.FlagsSampled}
	if parent.IsValid() {
		scc.TraceID, scc.TraceState, scc.TraceFlags = parent.TraceID(), parent.TraceState(), parent.TraceFlags()
	} else {
		scc.TraceID = newTraceID()
	}
	s := &span{t: t, sc: trace.NewSpanContext(scc), parent: parent, name: name, kind: c.SpanKind(), start: c.Timestamp()}
	if !scc.TraceFlags.IsSampled() {
		s.ended = true // not recording: nothing is kept or exported
		return trace.ContextWithSpan(ctx, s), s
	}
	if s.kind == trace.SpanKindUnspecified {
		s.kind = trace.SpanKindInternal
	}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.setAttributes(c.Attributes())
	return trace.ContextWithSpan(ctx, s), s
}

// newTraceID and newSpanID are random and never zero (an all-zero id is
// invalid). math/rand/v2's global source is seeded by the runtime and
// safe for concurrent use.
func newTraceID() (id trace.TraceID) {
	for !id.IsValid() {
		a, b := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			id[i], id[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
		}
	}
	return id
}

func newSpanID() (id trace.SpanID) {
	for !id.IsValid() {
		a := rand.Uint64()
		for i := range 8 {
			id[i] = byte(a >> (8 * i))
		}
	}
	return id
}

// event is a span event (AddEvent, RecordError).
type event struct {
	name  string
	time  time.Time
	attrs []attribute.KeyValue
}

// span is a recording span until End, which queues it for export.
type span struct {
	embedded.Span
	t      *tracer
	sc     trace.SpanContext
	parent trace.SpanContext

	mu            sync.Mutex
	ended         bool
	name          string
	kind          trace.SpanKind
	start, end    time.Time
	attrs         []attribute.KeyValue
	droppedAttrs  int
	events        []event
	droppedEvents int
	code          codes.Code
	desc          string
}

// setAttributes sets kvs, a key already set taking the new value, new
// keys past spanAttrLimit dropped and counted. The caller holds mu (or
// owns the span).
func (s *span) setAttributes(kvs []attribute.KeyValue) {
next:
	for _, kv := range kvs {
		if !kv.Valid() {
			continue
		}
		for i := range s.attrs {
			if s.attrs[i].Key == kv.Key {
				s.attrs[i] = kv
				continue next
			}
		}
		if len(s.attrs) >= spanAttrLimit {
			s.droppedAttrs++
			continue
		}
		s.attrs = append(s.attrs, kv)
	}
}

func (s *span) SetAttributes(kvs ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.setAttributes(kvs)
	}
}

func (s *span) End(opts ...trace.SpanEndOption) {
	c := trace.NewSpanEndConfig(opts...)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.end = c.Timestamp()
	if s.end.IsZero() {
		s.end = time.Now()
	}
	s.mu.Unlock()
	s.t.p.enqueue(s)
}

func (s *span) AddEvent(name string, opts ...trace.EventOption) {
	c := trace.NewEventConfig(opts...)
	s.addEvent(name, c.Timestamp(), c.Attributes())
}

func (s *span) addEvent(name string, at time.Time, attrs []attribute.KeyValue) {
	if at.IsZero() {
		at = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if len(s.events) >= spanEventLimit {
		s.droppedEvents++
		return
	}
	s.events = append(s.events, event{name: name, time: at, attrs: attrs})
}

// RecordError adds the "exception" event of the conventions, with the
// error's type and text: rally's own instrumentation never calls it, as
// an error's text may quote the conversation.
func (s *span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	c := trace.NewEventConfig(opts...)
	attrs := append([]attribute.KeyValue{attribute.String("exception.type", typeName(err)), attribute.String("exception.message", err.Error())}, c.Attributes()...)
	s.addEvent("exception", c.Timestamp(), attrs)
}

func (s *span) AddLink(trace.Link) {} // rally's instrumentation makes no links

func (s *span) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

func (s *span) SpanContext() trace.SpanContext { return s.sc }

// SetStatus follows the API's rules: Ok is final, Error keeps its
// description, Unset changes nothing.
func (s *span) SetStatus(code codes.Code, desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || code == codes.Unset || s.code == codes.Ok {
		return
	}
	s.code, s.desc = code, ""
	if code == codes.Error {
		s.desc = desc
	}
}

func (s *span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.name = name
	}
}

func (s *span) TracerProvider() trace.TracerProvider { return s.t.p }
