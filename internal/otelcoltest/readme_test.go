package otelcoltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// readmeAttrs are the attributes the README's tree shows, in its order;
// the others (times, sizes, ids) differ from run to run.
var readmeAttrs = []string{"gen_ai.operation.name", "gen_ai.request.model", "rally.turn.number", "http.request.resend_count", "error.type",
	"rally.retry.attempt", "rally.retry.class", "rally.retry.delay_ms", "rally.retry.hint_source", "rally.retry.wait.end",
	"gen_ai.response.finish_reasons"}

// TestREADMETrace runs the README's telemetry example as printed, with
// the collector's address for localhost:4318, and compares the trace the
// Collector received, drawn as a tree, with the README's block.
func TestREADMETrace(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const cmdPrefix = "OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 rally "
	var args []string
	for _, line := range strings.Split(string(readme), "\n") {
		if rest, ok := strings.CutPrefix(line, cmdPrefix); ok {
			args = words(rest)
		}
	}
	_, block, ok := strings.Cut(string(readme), "<!-- otelcol-trace -->\n```text\n")
	if !ok || args == nil {
		t.Fatal("README.md has no telemetry example")
	}
	want, _, _ := strings.Cut(block, "```")

	col := startCollector(t)
	isolate(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.HTTP)
	rally(t, "", args...)
	traces := col.Traces.AllTraces()
	if len(traces) == 0 {
		t.Fatal("no trace received")
	}
	var root ptrace.Span
	var spans []ptrace.Span
	for _, td := range traces {
		ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := range ss.Len() {
			spans = append(spans, ss.At(i))
			if ss.At(i).Name() == "invoke_agent" {
				root = ss.At(i)
			}
		}
	}
	got := drawTree(root, spans, 0)
	if got != want {
		t.Errorf("README.md's trace:\n%s\nthe collector received:\n%s", want, got)
	}
}

// drawTree is s and its children, indented, children in start order.
func drawTree(s ptrace.Span, all []ptrace.Span, depth int) string {
	line := strings.Repeat("  ", depth) + s.Name()
	for _, k := range readmeAttrs {
		if v, ok := s.Attributes().Get(k); ok {
			line += " " + k + "=" + v.AsString()
		}
	}
	out := line + "\n"
	var kids []ptrace.Span
	for _, c := range all {
		if c.ParentSpanID() == s.SpanID() && c.TraceID() == s.TraceID() {
			kids = append(kids, c)
		}
	}
	for i := 1; i < len(kids); i++ {
		for j := i; j > 0 && kids[j].StartTimestamp() < kids[j-1].StartTimestamp(); j-- {
			kids[j], kids[j-1] = kids[j-1], kids[j]
		}
	}
	for _, c := range kids {
		out += drawTree(c, all, depth+1)
	}
	return out
}

// words splits a command line at spaces, "double quotes" holding one word.
func words(line string) []string {
	var out []string
	for i, part := range strings.Split(line, `"`) {
		if i%2 == 1 {
			out = append(out, part)
			continue
		}
		out = append(out, strings.Fields(part)...)
	}
	return out
}
