package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/retry"
)

// Scope is the instrumentation scope of the session's spans and metrics.
const Scope = "github.com/rally-agent/rally/session"

// Span names and rally's own attribute keys (docs/telemetry.md lists them
// all). The GenAI and HTTP ones come from the semconv package.
const (
	SpanInvokeAgent = "invoke_agent"
	SpanTurn        = "rally.turn"
	SpanWait        = "rally.retry.wait"
	SpanCompaction  = "rally.compaction"

	keyAttempt     = attribute.Key("rally.retry.attempt")
	keyClass       = attribute.Key("rally.retry.class")
	keyReason      = attribute.Key("rally.retry.reason")
	keyDelayMs     = attribute.Key("rally.retry.delay_ms")
	keySwitchedTo  = attribute.Key("rally.retry.switched_to")
	keyHintSource  = attribute.Key("rally.retry.hint_source")
	keyWaitEnd     = attribute.Key("rally.retry.wait.end")
	keyCompReason  = attribute.Key("rally.compaction.reason")
	keyTokBefore   = attribute.Key("rally.compaction.tokens_before")
	keyTokAfter    = attribute.Key("rally.compaction.tokens_after")
	keySummaryCall = attribute.Key("rally.compaction.summary_calls")
	keyTurn        = attribute.Key("rally.turn.number")
	keyProvider    = attribute.Key("rally.provider")
	keyModel       = attribute.Key("rally.model")
)

// telemetry is what Config's providers gave the session: a tracer and the
// instruments. A session without providers has none (nil), and every hook
// is one nil check.
type telemetry struct {
	tracer  trace.Tracer
	capture bool

	opDuration, ttfc, tpoc, waitDur metric.Float64Histogram
	tokens                          metric.Int64Histogram
	attempts, switches, compactions metric.Int64Counter
}

// newTelemetry builds the instruments, or nil when Config names no
// provider: then nothing of OpenTelemetry runs at all.
func newTelemetry(cfg Config) *telemetry {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil && mp == nil {
		return nil
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(Scope)
	t := &telemetry{tracer: tp.Tracer(Scope), capture: cfg.CaptureContent}
	// The GenAI conventions' bucket boundaries (seconds, tokens).
	secs := metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
	chunk := metric.WithExplicitBucketBoundaries(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5)
	toks := metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
	// Instrument creation only fails on a bad name, which these are not;
	// the noop instrument it returns alongside keeps the session working.
	t.opDuration, _ = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"), metric.WithDescription("GenAI operation duration."), secs)
	t.ttfc, _ = m.Float64Histogram("gen_ai.client.operation.time_to_first_chunk", metric.WithUnit("s"), metric.WithDescription("Time to receive the first chunk from the model."), secs)
	t.tpoc, _ = m.Float64Histogram("gen_ai.client.operation.time_per_output_chunk", metric.WithUnit("s"), metric.WithDescription("Time between chunks of a streamed answer, after the first."), chunk)
	t.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"), metric.WithDescription("Number of input and output tokens used."), toks)
	t.attempts, _ = m.Int64Counter("rally.retry.attempts", metric.WithUnit("{attempt}"), metric.WithDescription("Retries started after a failed model call."))
	t.waitDur, _ = m.Float64Histogram("rally.retry.wait.duration", metric.WithUnit("s"), metric.WithDescription("How long a retry waited before its call, as it really took."), secs)
	t.switches, _ = m.Int64Counter("rally.usage_limit.switches", metric.WithUnit("{switch}"), metric.WithDescription("Switches to another credential or model after a usage limit."))
	t.compactions, _ = m.Int64Counter("rally.compactions", metric.WithUnit("{compaction}"), metric.WithDescription("Compaction operations."))
	return t
}

// promptTrace is the open spans of one prompt. Only the prompt's own
// goroutine touches it (the agent emits synchronously on it), so it needs
// no lock.
type promptTrace struct {
	t      *telemetry
	ctx    context.Context // carries the invoke_agent span
	prompt trace.Span
	turn   trace.Span
	turnN  int
	tctx   context.Context // carries the turn span

	call       trace.Span // the open inference span
	model      llm.Model
	start      time.Time
	first      time.Time     // first chunk; zero before it
	chunks     int           // chunks of the open call
	ended      time.Time     // when a failed call's message ended
	resend     int           // retries of the request the next call makes
	failedCall bool          // call failed and waits for the session's decision
	attrs      attribute.Set // the call's metric attributes, built once per call
	tools      map[string]trace.Span
}

// tracePrompt opens the prompt's invoke_agent span (a child of the span
// ctx carries: an embedding program's, or TRACEPARENT's), or does
// nothing without telemetry. end closes whatever is still open.
func (s *Session) tracePrompt(ctx context.Context) (context.Context, func(error)) {
	t := s.tel
	if t == nil {
		return ctx, func(error) {}
	}
	m := s.model()
	ctx, sp := t.tracer.Start(ctx, SpanInvokeAgent, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName("rally"),
		semconv.GenAIProviderNameKey.String(m.Provider), semconv.GenAIRequestModel(m.ID)))
	if s.cfg.Store != nil && s.cfg.Store.ID() != "" {
		sp.SetAttributes(semconv.GenAIConversationID(s.cfg.Store.ID()))
	}
	p := &promptTrace{t: t, ctx: ctx, prompt: sp}
	s.ptrace = p
	return ctx, func(err error) {
		p.endCall(err, nil)
		p.endTurn(err)
		fail(sp, err)
		sp.End()
		s.ptrace = nil
	}
}

// event follows the agent loop's events: the turn and inference spans,
// first-chunk and per-chunk times, tool spans. A delta costs two clock
// reads and one histogram record, never a span.
func (p *promptTrace) event(e Event, used llm.Model) {
	switch e := e.(type) {
	case MessageUpdateEvent:
		// The first chunk's time; the rest only counted: a clock read or
		// a histogram record per delta would cost the stream several
		// percent (BenchmarkTelemetryDelta).
		if p.chunks == 0 {
			p.first = time.Now()
		}
		p.chunks++
	case TurnStartEvent:
		p.startCall(used)
	case MessageEndEvent:
		if e.Message.Role == llm.Assistant && p.call != nil {
			p.answered(e.Message)
		}
	case ToolExecutionStartEvent:
		if p.tools == nil {
			p.tools = map[string]trace.Span{}
		}
		_, sp := p.t.tracer.Start(p.tctx, "execute_tool "+e.ToolName, trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(e.ToolName), semconv.GenAIToolCallID(e.ToolCallID)))
		if p.t.capture {
			sp.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(e.Args)))
		}
		p.tools[e.ToolCallID] = sp
	case ToolExecutionEndEvent:
		if sp := p.tools[e.ToolCallID]; sp != nil {
			delete(p.tools, e.ToolCallID)
			if e.IsError {
				sp.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
				sp.SetStatus(codes.Error, "tool failed")
			}
			sp.End()
		}
	case TurnEndEvent:
		if !p.failedCall {
			p.endTurn(nil)
		}
	}
}

// startCall opens the turn span (unless a retried turn's is still open)
// and the call's inference span.
func (p *promptTrace) startCall(m llm.Model) {
	if p.turn == nil {
		p.turnN++
		p.tctx, p.turn = p.t.tracer.Start(p.ctx, SpanTurn, trace.WithAttributes(keyTurn.Int(p.turnN)))
	}
	p.model, p.start, p.first, p.chunks, p.failedCall = m, time.Now(), time.Time{}, 0, false
	p.attrs = p.callAttrs(nil)
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(m.Provider),
		semconv.GenAIRequestModel(m.ID), semconv.GenAIRequestStream(true)}
	if p.resend > 0 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(p.resend))
	}
	_, p.call = p.t.tracer.Start(p.tctx, "chat "+m.ID, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// callAttrs are the metric attributes of the open call; errType "" for a
// call that worked.
func (p *promptTrace) callAttrs(extra []attribute.KeyValue) attribute.Set {
	kv := append([]attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(p.model.Provider),
		semconv.GenAIRequestModel(p.model.ID)}, extra...)
	return attribute.NewSet(kv...)
}

// answered records what the call's message says; a failed call's span
// stays open for the session's decision about it (rally.retry.*).
func (p *promptTrace) answered(m *llm.Message) {
	sp := p.call
	if p.chunks > 0 {
		sp.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(p.first.Sub(p.start).Seconds()))
		p.t.ttfc.Record(p.tctx, p.first.Sub(p.start).Seconds(), metric.WithAttributeSet(p.attrs))
	}
	if p.chunks > 1 {
		// Once per call: the mean time between its chunks after the first.
		per := time.Since(p.first).Seconds() / float64(p.chunks-1)
		p.t.tpoc.Record(p.tctx, per, metric.WithAttributeSet(p.attrs))
	}
	if m.StopReason != "" && !failedAnswer(*m) { // "error" and "aborted" are no reasons to finish
		sp.SetAttributes(semconv.GenAIResponseFinishReasons(string(m.StopReason)))
	}
	if u := m.Usage; u != nil {
		sp.SetAttributes(semconv.GenAIUsageInputTokens(u.Input), semconv.GenAIUsageOutputTokens(u.Output),
			semconv.GenAIUsageCacheReadInputTokens(u.CacheRead), semconv.GenAIUsageCacheCreationInputTokens(u.CacheWrite))
		p.t.tokens.Record(p.tctx, int64(u.Input+u.CacheRead+u.CacheWrite), metric.WithAttributeSet(p.callAttrs([]attribute.KeyValue{semconv.GenAITokenTypeInput})))
		p.t.tokens.Record(p.tctx, int64(u.Output), metric.WithAttributeSet(p.callAttrs([]attribute.KeyValue{semconv.GenAITokenTypeOutput})))
	}
	if p.t.capture && m.StopReason != llm.Error {
		sp.SetAttributes(semconv.GenAIOutputMessagesKey.String(outputMessages(m)))
	}
	if failedAnswer(*m) {
		p.failedCall, p.ended = true, time.Now()
		return
	}
	p.endCall(nil, nil)
	p.resend = 0
}

// endCall ends the open inference span: failed with err (its error.type
// the class, when rep says one), with the decision's attributes.
func (p *promptTrace) endCall(err error, rep *retry.Report, attrs ...attribute.KeyValue) {
	sp := p.call
	if sp == nil {
		return
	}
	p.call = nil
	end := time.Now()
	if p.failedCall {
		end = p.ended
	}
	var extra []attribute.KeyValue
	if err != nil {
		et := "error"
		if rep != nil {
			et = rep.Class.String()
		} else if errors.Is(err, context.Canceled) {
			et = "cancelled"
		}
		extra = []attribute.KeyValue{semconv.ErrorTypeKey.String(et)}
		sp.SetAttributes(extra...)
		sp.SetAttributes(attrs...)
		sp.SetStatus(codes.Error, "model call failed")
	}
	p.t.opDuration.Record(p.tctx, end.Sub(p.start).Seconds(), metric.WithAttributeSet(p.callAttrs(extra)))
	sp.End(trace.WithTimestamp(end))
}

func (p *promptTrace) endTurn(err error) {
	if p.turn == nil {
		return
	}
	for id, sp := range p.tools { // a tool the run left running (an abort)
		fail(sp, err)
		sp.End()
		delete(p.tools, id)
	}
	fail(p.turn, err)
	p.turn.End()
	p.turn = nil
	p.failedCall = false
}

// fail marks a span failed by err (nothing for nil). The status says the
// kind only: an error's text may quote the conversation.
func fail(sp trace.Span, err error) {
	if err == nil {
		return
	}
	sp.SetStatus(codes.Error, "failed")
}

// traceDecision ends a failed call's span with what the policy decided
// about it (attempt n, the retry or switch it starts) and counts the
// retry. A give-up leaves the turn to the prompt's end, which fails it; a
// context overflow (a give-up for the policy) goes to compaction, and the
// call after it is a resend too.
func (s *Session) traceDecision(callErr error, rep retry.Report, n int, d retry.Decision, switched string) {
	p := s.ptrace
	if p == nil {
		return
	}
	attrs := []attribute.KeyValue{keyAttempt.Int(n), keyClass.String(rep.Class.String()), keyReason.String(d.Reason),
		keyDelayMs.Int64(d.Delay.Milliseconds()), keyHintSource.String(hintSource(callErr, rep, s.now()))}
	if switched != "" {
		attrs = append(attrs, keySwitchedTo.String(switched))
	}
	model := p.model
	p.endCall(callErr, &rep, attrs...)
	p.resend++
	if d.Action == retry.GiveUp {
		return
	}
	by := metric.WithAttributes(keyProvider.String(model.Provider), keyModel.String(model.ID), keyClass.String(rep.Class.String()))
	p.t.attempts.Add(p.ctx, 1, by)
	if switched != "" {
		p.t.switches.Add(p.ctx, 1, by)
	}
}

// hintSource says where the wait the policy took came from: the
// response's headers, its body, or nowhere (the policy's own backoff).
// The one hint rule (retry.Hint) decides; only its input is narrowed.
func hintSource(err error, rep retry.Report, now time.Time) string {
	if rep.Hint <= 0 {
		return "none"
	}
	f := retry.FailureOf(err)
	if retry.Hint(retry.Failure{Header: f.Header}, now) > 0 {
		return "header"
	}
	return "body"
}

// traceWait opens the retry wait's span; its end says how the wait
// ended and records its real length.
func (s *Session) traceWait(n int, delay time.Duration, switched string) func(ok bool) {
	p := s.ptrace
	if p == nil {
		return func(bool) {}
	}
	start := time.Now()
	_, sp := p.t.tracer.Start(p.tctx, SpanWait, trace.WithTimestamp(start), trace.WithAttributes(keyAttempt.Int(n), keyDelayMs.Int64(delay.Milliseconds())))
	return func(ok bool) {
		how := "elapsed"
		switch {
		case !ok:
			how = "cancelled"
		case switched != "":
			how = "switched"
		}
		sp.SetAttributes(keyWaitEnd.String(how))
		took := time.Since(start)
		p.t.waitDur.Record(p.ctx, took.Seconds(), metric.WithAttributes(keyWaitEnd.String(how)))
		sp.End()
	}
}

// compactionTrace counts one compaction's summary calls.
type compactionTrace struct{ calls int }

// traceCompaction opens a compaction's span under the prompt's turn (an
// overflow), the prompt (before its first call) or ctx's span (an
// explicit compact); done ends it with the outcome.
func (s *Session) traceCompaction(ctx context.Context, reason CompactionReason) func(res *CompactionResult, err error) {
	t := s.tel
	if t == nil {
		return func(*CompactionResult, error) {}
	}
	if p := s.ptrace; p != nil {
		ctx = p.ctx
		if p.turn != nil {
			ctx = p.tctx
		}
	}
	_, sp := t.tracer.Start(ctx, SpanCompaction, trace.WithAttributes(keyCompReason.String(string(reason))))
	ct := &compactionTrace{}
	s.ctrace = ct
	return func(res *CompactionResult, err error) {
		s.ctrace = nil
		attrs := []attribute.KeyValue{keySummaryCall.Int(ct.calls)}
		if res != nil {
			attrs = append(attrs, keyTokBefore.Int(res.TokensBefore), keyTokAfter.Int(s.need(s.sendableView())))
		}
		sp.SetAttributes(attrs...)
		outcome := "compacted"
		if err != nil {
			outcome = "failed"
			fail(sp, err)
		}
		t.compactions.Add(ctx, 1, metric.WithAttributes(keyCompReason.String(string(reason)), attribute.String("rally.compaction.outcome", outcome)))
		sp.End()
	}
}

// traceSummaryCall counts a compaction's model call.
func (s *Session) traceSummaryCall() {
	if ct := s.ctrace; ct != nil {
		ct.calls++
	}
}

// outputMessages is gen_ai.output.messages for an answer (captured content
// only): the conventions' JSON form, its text parts.
func outputMessages(m *llm.Message) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type msg struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	b, _ := json.Marshal([]msg{{Role: "assistant", Parts: []part{{Type: "text", Content: m.TextOf()}}, FinishReason: string(m.StopReason)}})
	return string(b)
}
