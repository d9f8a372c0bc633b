package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rally-agent/rally/llmtest"
)

// TestRetryFailedCountsCalls: print mode's final failure counts the calls
// the fake LLM saw and the retries among them, in the right number. It
// said "retry failed after 2 attempts" after 3 calls, and "after 1
// attempts".
func TestRetryFailedCountsCalls(t *testing.T) {
	for _, c := range []struct {
		maxRetries int
		want       string
	}{
		{1, "rally: retry failed after 2 calls (1 retry): custom: 503"},
		{2, "rally: retry failed after 3 calls (2 retries): custom: 503"},
	} {
		t.Run(c.want, func(t *testing.T) {
			home := isolate(t)
			settings := `{"retry":{"maxRetries":` + strconv.Itoa(c.maxRetries) + `,"baseDelayMs":1}}`
			if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Status: 503})
			_, errOut, code := run(t, "", "--no-session", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m", "-p", "hi")
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, errOut, c.want)
			}
			if n := len(srv.Requests()); n != c.maxRetries+1 {
				t.Errorf("the fake LLM saw %d calls, want %d", n, c.maxRetries+1)
			}
		})
	}
}

// TestClassifyBadLine: rally classify answers a line it cannot read in the
// terms of its input format. It answered with Go's decoder text
// ("cannot unmarshal string into Go struct field classifyIn.status").
func TestClassifyBadLine(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"status":"429"}`, `classify: bad input: "status" must be a whole number, got a string`},
		{`{"status":4.5}`, `classify: bad input: "status" must be a whole number, got number 4.5`},
		{`{"provider":3,"status":429}`, `classify: bad input: "provider" must be a string, got a number`},
		{`{"status":429,"headers":{"retry-after":2}}`, `classify: bad input: "headers" must map each name to a string, got a number`},
		{`{"status":429,"headers":["retry-after"]}`, `classify: bad input: "headers" must be an object, got an array`},
		{`[429]`, `classify: bad input: want one JSON object per line ({"status": 429, "body": "…"}), got an array`},
		{`429 overloaded`, `classify: bad input: not JSON: invalid character 'o' after top-level value at byte 5`},
		{`{"status":429`, `classify: bad input: not JSON: unexpected end of JSON input at byte 13`},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			out, errOut, code := run(t, c.line+"\n", "classify")
			var got struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
				t.Fatalf("exit %d, stdout %q (%v), stderr %q", code, out, err, errOut)
			}
			if got.Error != c.want {
				t.Errorf("error %q\nwant  %q", got.Error, c.want)
			}
		})
	}
}
