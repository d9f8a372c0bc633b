package session

import (
	"context"
	"testing"
	"testing/synctest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// onStart is a span processor that calls fn as each span starts, on the
// goroutine that starts it.
type onStart struct {
	sdktrace.SpanProcessor
	fn func(name string)
}

func (p onStart) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	p.fn(s.Name())
	p.SpanProcessor.OnStart(ctx, s)
}

// TestStateRetryingFromAutoRetryStart: once auto_retry_start is out, State
// says the session is retrying (and not streaming), even before the wait's
// timer started. The wait's span starts on the run's goroutine after the
// event and before the timer, the moment an RPC client's get_state right
// after auto_retry_start could be answered on a loaded machine; it was
// answered "isRetrying": false, "isStreaming": true there
// (TestAbortRetryOverProcess failed now and then).
func TestStateRetryingFromAutoRetryStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s *Session
		var seen []State
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(onStart{
			SpanProcessor: sdktrace.NewSimpleSpanProcessor(nopExporter{}),
			fn: func(name string) {
				if name == SpanWait {
					seen = append(seen, s.State())
				}
			},
		}))
		s, _, stop := newSession(t, &fake{steps: []step{{err: overloaded()}, {text: "ok"}}}, Config{TracerProvider: tp})
		defer stop()
		if err := s.Prompt(context.Background(), "go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 {
			t.Fatalf("%d wait spans, want 1", len(seen))
		}
		if st := seen[0]; !st.Retrying || st.Streaming || st.RetryAttempt != 1 || st.Phase.Kind != PhaseRetryWait {
			t.Errorf("state between auto_retry_start and the wait: retrying %v, streaming %v, attempt %d, phase %s; want retrying, not streaming, attempt 1, retry wait",
				st.Retrying, st.Streaming, st.RetryAttempt, st.Phase.Kind)
		}
		if st := s.State(); st.Retrying || st.RetryAttempt != 0 {
			t.Errorf("after the run: retrying %v, attempt %d", st.Retrying, st.RetryAttempt)
		}
	})
}

// nopExporter drops the spans: the test reads State, not them.
type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                             { return nil }
