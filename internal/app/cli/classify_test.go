package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestClassifyCommand(t *testing.T) {
	in := strings.Join([]string{
		`{"provider":"anthropic","status":529,"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`,
		`this is not json`,
		``,
		`{"provider":"openai","status":429,"headers":{"retry-after":"2"},"body":{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota"}}}`,
		`{"status":"429"}`,
		`{"status":429,"headers":{"Retry-After":"2"},"body":"rate limited"}`,
		`{"body":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."}`,
	}, "\n")
	out, errOut, code := run(t, in, "classify")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("output not JSON lines: %v\n%s", err, out)
		}
		got = append(got, m)
	}
	want := []struct {
		class string
		ms    any
		err   bool
	}{
		{"transient", nil, false},
		{"", nil, true},
		{"fatal", 2000.0, false},
		{"", nil, true},
		{"transient", 2000.0, false},
		{"context_overflow", nil, false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d answers, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		if _, hasErr := g["error"]; hasErr != w.err {
			t.Errorf("line %d: error present = %v, want %v (%v)", i, hasErr, w.err, g)
		}
		if w.err {
			continue
		}
		if g["class"] != w.class || g["retryAfterMs"] != w.ms {
			t.Errorf("line %d: got class %v retryAfterMs %v, want %v %v", i, g["class"], g["retryAfterMs"], w.class, w.ms)
		}
		if g["reason"] == "" {
			t.Errorf("line %d: empty reason", i)
		}
	}
}

func TestClassifyHugeLine(t *testing.T) {
	in := `{"body":"` + strings.Repeat("x", maxClassifyLine) + `"}` + "\n" + `{"status":503}`
	out, errOut, code := run(t, in, "classify")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "longer than") || !strings.Contains(lines[1], `"class":"transient"`) {
		t.Fatalf("want an error answer for the huge line and an answer for the next, got:\n%.300s", out)
	}
}
