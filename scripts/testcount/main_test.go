package main

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	const p = `"Package":"example.com/p"`
	tests := []struct {
		name   string
		in     []string
		failed bool
		want   string
	}{
		{"pass and skip", []string{
			`{"Action":"run",` + p + `,"Test":"TestA"}`,
			`{"Action":"output",` + p + `,"Test":"TestA","Output":"=== RUN   TestA\n"}`,
			`{"Action":"output",` + p + `,"Test":"TestA","Output":"    a_test.go:9: chatter\n"}`,
			`{"Action":"pass",` + p + `,"Test":"TestA"}`,
			`{"Action":"output",` + p + `,"Test":"TestB","Output":"=== RUN   TestB\n"}`,
			`{"Action":"output",` + p + `,"Test":"TestB","Output":"    b_test.go:3: node is not installed\n"}`,
			`{"Action":"output",` + p + `,"Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
			`{"Action":"skip",` + p + `,"Test":"TestB"}`,
			`{"Action":"output",` + p + `,"Output":"PASS\n"}`,
			`{"Action":"output",` + p + `,"Output":"ok  \texample.com/p\t0.1s\n"}`,
			`{"Action":"pass",` + p + `}`,
			`{"Action":"skip","Package":"example.com/q"}`,
		}, false, "ok  \texample.com/p\t0.1s\n1 test skipped\n  skipped example.com/p TestB: b_test.go:3: node is not installed\n"},
		{"a failure shows its output", []string{
			`{"Action":"output",` + p + `,"Test":"TestC","Output":"=== RUN   TestC\n"}`,
			`{"Action":"output",` + p + `,"Test":"TestC","Output":"    c_test.go:5: got 1, want 2\n"}`,
			`{"Action":"output",` + p + `,"Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}`,
			`{"Action":"fail",` + p + `,"Test":"TestC"}`,
			`{"Action":"output",` + p + `,"Output":"FAIL\n"}`,
			`{"Action":"output",` + p + `,"Output":"FAIL\texample.com/p\t0.1s\n"}`,
			`{"Action":"fail",` + p + `}`,
		}, true, "    c_test.go:5: got 1, want 2\n--- FAIL: TestC (0.00s)\nFAIL\nFAIL\texample.com/p\t0.1s\n0 tests skipped\n"},
		{"a build error", []string{
			`{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-output","Output":"p.go:3:1: syntax error\n"}`,
			`{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-fail"}`,
			`{"Action":"output",` + p + `,"Output":"FAIL\texample.com/p [build failed]\n"}`,
			`{"Action":"fail",` + p + `}`,
		}, true, "p.go:3:1: syntax error\nFAIL\texample.com/p [build failed]\n0 tests skipped\n"},
		{"a line that is not JSON", []string{`go: downloading x v1`}, false, "go: downloading x v1\n0 tests skipped\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := count(strings.NewReader(strings.Join(tt.in, "\n")+"\n"), &out)
			if err != nil || failed != tt.failed || out.String() != tt.want {
				t.Errorf("failed %v, err %v, wrote\n%q\nwant failed %v,\n%q", failed, err, out.String(), tt.failed, tt.want)
			}
		})
	}
}
