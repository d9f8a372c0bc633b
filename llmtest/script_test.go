package llmtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

func TestLoadScript(t *testing.T) {
	steps, err := llmtest.LoadScript("testdata/script.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 11 {
		t.Fatalf("%d steps", len(steps))
	}
	if steps[1].Header["retry-after"] != "1" || steps[1].Error != llmtest.RateLimited {
		t.Errorf("step 2: %+v", steps[1])
	}
	if steps[2].Body != `{"error":{"message":"custom body","type":"invalid_request_error"}}` {
		t.Errorf("body as a JSON value: %q", steps[2].Body)
	}
	if steps[5].Delay != 5*time.Millisecond || steps[7].Delay != time.Millisecond {
		t.Errorf("delays %v %v", steps[5].Delay, steps[7].Delay)
	}
	fixture, _ := os.ReadFile("testdata/anthropic-hello.sse")
	if string(steps[7].Raw) != string(fixture) {
		t.Error("rawFile not read relative to the script")
	}
	tc := steps[9].ToolCalls
	if len(tc) != 2 || tc[0].Arguments != `{"path":"README.md"}` || tc[1].Arguments != `{"command":"ls"}` || tc[1].ID != "call_fixed" {
		t.Errorf("tool calls %+v", tc)
	}
	if u := steps[9].Usage; u == nil || *u != (llmtest.Usage{Input: 1200, Output: 40, CacheRead: 800, CacheWrite: 100}) {
		t.Errorf("usage %+v", u)
	}
	if steps[10].Fault != llmtest.Pass {
		t.Errorf("last step %+v", steps[10])
	}
}

func TestStepJSONRoundTrip(t *testing.T) {
	in := llmtest.Step{
		Fault: llmtest.ErrorEvent, Text: "a b", Delay: 1500 * time.Microsecond, After: 1,
		ToolCalls: []llmtest.ToolCall{{Name: "x", Arguments: `{"a":1}`}},
		Body:      "not json", Raw: []byte("data: x\n\n"), Header: map[string]string{"a": "b"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"delay":"1.5ms"`) || !strings.Contains(string(b), `"arguments":{"a":1}`) {
		t.Errorf("json %s", b)
	}
	var out llmtest.Step
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n%+v\n%+v", in, out)
	}
}

func TestScriptErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`[{"fault":"explode"}]`, `unknown fault "explode"`},
		{`[{"error":"sad"}]`, `unknown error kind "sad"`},
		{`[{"fault":"http"}]`, "needs an error kind or a status"},
		{`[{"toolCalls":[{"name":"x","arguments":"[1]"}]}]`, "must be a JSON object"},
		{`[{"toolCalls":[{"arguments":{}}]}]`, "has no name"},
		{`[{"delay":"soon"}]`, `delay "soon"`},
		{`[{"after":-1}]`, "must not be negative"},
		{`[{"rawFile":"missing.sse"}]`, "missing.sse"},
		{`{"not":"a list"}`, "cannot unmarshal"},
	} {
		p := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(p, []byte(c.script), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := llmtest.LoadScript(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "llmtest: ") {
			t.Errorf("%s: error %v, want %q", c.script, err, c.want)
		}
	}
}

func TestInvalidStepIsReported(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "x", Arguments: "not json"}}})
	resp := mustPost(t, s.URL, llmtest.GoogleGenerativeAI)
	if resp.StatusCode != 500 || s.Requests()[0].Outcome != "invalid step" {
		t.Errorf("status %d, outcome %q", resp.StatusCode, s.Requests()[0].Outcome)
	}
}
