package otelcoltest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/rally-agent/rally/internal/app/cli"
	"github.com/rally-agent/rally/llmtest"
)

const (
	keyA = "sk-test-AAAAAAAAAAAAAAAA1111"
	keyB = "sk-test-BBBBBBBBBBBBBBBB2222"
	// The parent a CI job hands rally in TRACEPARENT.
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	// Words of the conversation, which must not leave the machine.
	secretPrompt = "tell me about the marmalade ledger"
	secretAnswer = "the ledger balances in quince"
)

// isolate gives rally an empty home and working directory and no key
// from the environment.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("RALLY_HOME", t.TempDir())
	for _, k := range []string{"RALLY_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY",
		"TRACEPARENT", "TRACESTATE", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS"} {
		t.Setenv(k, "")
	}
	t.Setenv("TZ", "UTC")
	t.Chdir(t.TempDir())
}

func rally(t *testing.T, stdin string, args ...string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(args, strings.NewReader(stdin), &out, &errb); code != 0 {
		t.Fatalf("rally %v: exit %d\n%s\n%s", args, code, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// span is one exported span, with its parent's name.
type span struct {
	ptrace.Span
	parent string
}

// spansOf are the spans of one trace, in start order.
func spansOf(traces []ptrace.Traces, traceID string) []span {
	var all []ptrace.Span
	for _, td := range traces {
		for i := range td.ResourceSpans().Len() {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range ss.Len() {
				for k := range ss.At(j).Spans().Len() {
					if s := ss.At(j).Spans().At(k); s.TraceID().String() == traceID {
						all = append(all, s)
					}
				}
			}
		}
	}
	names := map[pcommon.SpanID]string{}
	for _, s := range all {
		names[s.SpanID()] = s.Name()
	}
	out := make([]span, 0, len(all))
	for _, s := range all {
		p := names[s.ParentSpanID()]
		if p == "" {
			p = s.ParentSpanID().String()
		}
		out = append(out, span{s, p})
	}
	for i := 1; i < len(out); i++ { // insertion sort by start time
		for j := i; j > 0 && out[j].StartTimestamp() < out[j-1].StartTimestamp(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func attr(s span, k string) string {
	v, ok := s.Attributes().Get(k)
	if !ok {
		return "-"
	}
	return v.AsString()
}

// TestFlakyRunTrace sends a prompt through a 503, a 429 with retry-after,
// a usage limit that switches to the second key and a context overflow
// that compacts, with TRACEPARENT set, and reads what a real Collector
// received over OTLP/HTTP: the span tree, its attributes, the metric
// points, and no key and no conversation text anywhere.
func TestFlakyRunTrace(t *testing.T) {
	col := startCollector(t)
	isolate(t)
	for _, c := range []struct{ id, key string }{{"a", keyA}, {"b", keyB}} {
		rally(t, c.key, "auth", "add", "acme", "--id", c.id, "--key", "-")
	}
	usage := llmtest.Step{Fault: llmtest.HTTPError, Status: 429, Header: map[string]string{"retry-after": "18000"},
		Body: `{"error":{"message":"Daily usage limit reached for key ` + keyA + `.","type":"usage_limit_reached","code":"usage_limit_reached"}}`}
	srv := llmtest.NewServer(t,
		llmtest.Step{Text: "first " + secretAnswer},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded},
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": "1"}},
		usage,
		llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overflow},
		llmtest.Step{Text: "## Goal\nsummary of " + secretAnswer},
		llmtest.Step{Text: secretAnswer},
	)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(filepath.Join(".rally", "settings.json"), []byte(`{"retry":{"baseDelayMs":1}}`), 0o644)
	args := []string{"--mode", "json", "--provider", "acme", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}

	// The first prompt, with telemetry off by OTEL_SDK_DISABLED although
	// an endpoint is set, gives the second an older part to compact.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.HTTP)
	t.Setenv("OTEL_SDK_DISABLED", "true")
	rally(t, "", append(args, "-p", "first: "+secretPrompt)...)
	if n := col.Traces.SpanCount(); n != 0 {
		t.Fatalf("OTEL_SDK_DISABLED=true exported %d spans", n)
	}
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "ci-agent")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	t.Setenv("TRACEPARENT", "00-"+parentTrace+"-"+parentSpan+"-01")
	out, _ := rally(t, "", append(args, "--continue", "-p", secretPrompt)...)
	if !strings.Contains(out, secretAnswer) {
		t.Fatalf("the run did not recover: %s", out)
	}

	spans := spansOf(col.Traces.AllTraces(), parentTrace)
	var tree []string
	for _, s := range spans {
		line := s.Name() + " < " + s.parent
		switch {
		case strings.HasPrefix(s.Name(), "chat "):
			line += " kind=" + s.Kind().String() + " resend=" + attr(s, "http.request.resend_count") + " error=" + attr(s, "error.type") +
				" attempt=" + attr(s, "rally.retry.attempt") + " class=" + attr(s, "rally.retry.class") + " delay=" + attr(s, "rally.retry.delay_ms") +
				" hint=" + attr(s, "rally.retry.hint_source") + " switched=" + attr(s, "rally.retry.switched_to") +
				" provider=" + attr(s, "gen_ai.provider.name") + " stream=" + attr(s, "gen_ai.request.stream")
		case s.Name() == "rally.retry.wait":
			line += " attempt=" + attr(s, "rally.retry.attempt") + " end=" + attr(s, "rally.retry.wait.end")
		case s.Name() == "rally.compaction":
			line += " reason=" + attr(s, "rally.compaction.reason") + " calls=" + attr(s, "rally.compaction.summary_calls")
		}
		tree = append(tree, line)
	}
	want := []string{
		"invoke_agent < " + parentSpan,
		"rally.turn < invoke_agent",
		"chat m < rally.turn kind=Client resend=- error=transient attempt=1 class=transient delay=1 hint=none switched=- provider=acme stream=true",
		"rally.retry.wait < rally.turn attempt=1 end=elapsed",
		"chat m < rally.turn kind=Client resend=1 error=transient attempt=2 class=transient delay=1000 hint=header switched=- provider=acme stream=true",
		"rally.retry.wait < rally.turn attempt=2 end=elapsed",
		"chat m < rally.turn kind=Client resend=2 error=usage_limit attempt=3 class=usage_limit delay=0 hint=header switched=b provider=acme stream=true",
		"rally.retry.wait < rally.turn attempt=3 end=switched",
		"chat m < rally.turn kind=Client resend=3 error=context_overflow attempt=3 class=context_overflow delay=0 hint=none switched=- provider=acme stream=true",
		"rally.compaction < rally.turn reason=overflow calls=1",
		"chat m < rally.turn kind=Client resend=4 error=- attempt=- class=- delay=- hint=- switched=- provider=acme stream=true",
	}
	if strings.Join(tree, "\n") != strings.Join(want, "\n") {
		t.Errorf("span tree:\n%s\nwant:\n%s", strings.Join(tree, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range spans {
		if s.Name() == "rally.retry.wait" && attr(s, "rally.retry.attempt") == "2" {
			if took := s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime()); took.Seconds() < 1 {
				t.Errorf("the retry-after: 1 wait lasted %s, want its real length, 1 s or more", took)
			}
		}
		if s.Name() == "rally.compaction" {
			before, _ := s.Attributes().Get("rally.compaction.tokens_before")
			after, _ := s.Attributes().Get("rally.compaction.tokens_after")
			if before.Int() <= 0 || after.Int() <= 0 {
				t.Errorf("compaction tokens before %d after %d", before.Int(), after.Int())
			}
		}
		if strings.HasPrefix(s.Name(), "chat ") && attr(s, "error.type") == "-" {
			if in, _ := s.Attributes().Get("gen_ai.usage.input_tokens"); in.Int() <= 0 {
				t.Errorf("the answer's span has no gen_ai.usage.input_tokens")
			}
		}
	}
	if rs := col.Traces.AllTraces(); len(rs) > 0 {
		res := rs[len(rs)-1].ResourceSpans().At(0).Resource().Attributes()
		name, _ := res.Get("service.name")
		env, _ := res.Get("deployment.environment.name")
		if name.Str() != "ci-agent" || env.Str() != "test" {
			t.Errorf("resource service.name %q deployment.environment.name %q, want the OTEL_* variables'", name.Str(), env.Str())
		}
	}

	sums := metricSums(col.Metrics.AllMetrics())
	for k, want := range map[string]float64{
		"rally.retry.attempts{class=transient}":         2,
		"rally.retry.attempts{class=usage_limit}":       1,
		"rally.usage_limit.switches{class=usage_limit}": 1,
		"rally.compactions{reason=overflow}":            1,
		"gen_ai.client.operation.duration":              5,
		"rally.retry.wait.duration":                     3,
		"gen_ai.client.token.usage{type=output}":        1,
	} {
		if sums[k] != want {
			t.Errorf("metric %s = %v, want %v", k, sums[k], want)
		}
	}
	if t.Failed() {
		t.Logf("metrics: %v", sums)
	}
	noSecrets(t, col)
}

// metricSums folds the metric points into one number per name and chosen
// attribute: a counter's value, a histogram's count (the last export
// holds the cumulative totals).
func metricSums(ms []pmetric.Metrics) map[string]float64 {
	out := map[string]float64{}
	if len(ms) == 0 {
		return out
	}
	last := ms[len(ms)-1]
	for i := range last.ResourceMetrics().Len() {
		sm := last.ResourceMetrics().At(i).ScopeMetrics()
		for j := range sm.Len() {
			for k := range sm.At(j).Metrics().Len() {
				m := sm.At(j).Metrics().At(k)
				label := func(a pcommon.Map) string {
					for _, key := range []string{"rally.retry.class", "rally.compaction.reason", "gen_ai.token.type"} {
						if v, ok := a.Get(key); ok {
							return "{" + key[strings.LastIndex(key, ".")+1:] + "=" + v.Str() + "}"
						}
					}
					return ""
				}
				switch m.Type() {
				case pmetric.MetricTypeSum:
					for p := range m.Sum().DataPoints().Len() {
						dp := m.Sum().DataPoints().At(p)
						out[m.Name()+label(dp.Attributes())] += float64(dp.IntValue()) + dp.DoubleValue()
					}
				case pmetric.MetricTypeHistogram:
					for p := range m.Histogram().DataPoints().Len() {
						dp := m.Histogram().DataPoints().At(p)
						if m.Name() == "gen_ai.client.token.usage" {
							out[m.Name()+label(dp.Attributes())] += float64(dp.Count())
						} else {
							out[m.Name()] += float64(dp.Count())
						}
					}
				}
			}
		}
	}
	return out
}

// noSecrets reads everything the collector received, as its own JSON
// form, for the keys, their fingerprints' tails and the conversation.
func noSecrets(t *testing.T, col *collector) {
	t.Helper()
	var all strings.Builder
	for _, td := range col.Traces.AllTraces() {
		b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		all.Write(b)
	}
	for _, md := range col.Metrics.AllMetrics() {
		b, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
		all.Write(b)
	}
	text := all.String()
	if len(text) < 1000 {
		t.Fatalf("only %d bytes exported", len(text))
	}
	for _, bad := range []string{keyA, keyB, "AAAAAAAA", "BBBBBBBB", secretPrompt, secretAnswer, "marmalade", "quince"} {
		if strings.Contains(text, bad) {
			t.Errorf("the exported telemetry contains %q", bad)
		}
	}
}
