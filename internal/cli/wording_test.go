package cli

import (
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
