package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClassifyExplain: --explain says which signal decided, the sizes an
// overflow states and whether only the fallback decided; without it the
// answer keeps its three fields.
func TestClassifyExplain(t *testing.T) {
	in := strings.Join([]string{
		`{"provider":"vllm","status":400,"body":"ValueError: The decoder prompt (length 17772) is longer than the maximum model length of 16384."}`,
		`{"provider":"openai","status":429,"body":"slow down"}`,
		`{"provider":"ollama","status":500,"body":"{\"error\":\"model requires more system memory (7.5 GiB) than is available (5.2 GiB)\"}"}`,
		`{"body":"the frobnicator jammed"}`,
		`{"body":"Please wait 8s."}`,
	}, "\n")
	tests := []struct {
		signal, class     string
		window, requested float64
		fallback          bool
	}{
		{"overflow", "context_overflow", 16384, 17772, false},
		{"status", "transient", 0, 0, false},
		{"family", "fatal", 0, 0, false},
		{"none", "fatal", 0, 0, true},
		{"wait", "transient", 0, 0, false},
	}
	out, errOut, code := run(t, in, "classify", "--explain")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(tests) {
		t.Fatalf("%d answers, want %d:\n%s", len(lines), len(tests), out)
	}
	for i, w := range tests {
		t.Run(w.signal, func(t *testing.T) {
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
				t.Fatal(err)
			}
			window, _ := got["window"].(float64)
			requested, _ := got["requested"].(float64)
			fallback, _ := got["fallback"].(bool)
			if got["signal"] != w.signal || got["class"] != w.class || window != w.window || requested != w.requested || fallback != w.fallback {
				t.Errorf("answer %s, want signal %s, class %s, window %v, requested %v, fallback %v", lines[i], w.signal, w.class, w.window, w.requested, w.fallback)
			}
		})
	}

	plain, _, _ := run(t, in, "classify")
	if strings.Contains(plain, `"signal"`) || strings.Contains(plain, `"fallback"`) {
		t.Errorf("without --explain the answers grew:\n%s", plain)
	}
	if _, errOut, code := run(t, "", "classify", "--explain", "--unclassified"); code == 0 || !strings.Contains(errOut, "explain") {
		t.Errorf("--explain with --unclassified: exit %d, stderr %q; want a refusal naming the flags", code, errOut)
	}
}
