package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/llmtest"
)

// TestACPLoadInterruptedWait stops a real rally during a wait for a usage
// limit's reset, then session/loads its file in `rally --mode acp` with the
// official ACP SDK's client (testdata/acp-wait.mjs): under
// --wait-for-reset the load says so and the wait resumes for what is left
// of it, the interrupted prompt's answer streaming after it with no
// further usage limit, then that of a prompt sent during the wait; without it the editor is told how to resume and
// nothing is sent; session/cancel ends a resumed two-hour wait at once.
func TestACPLoadInterruptedWait(t *testing.T) {
	node, sdkDir := nodePackage(t, "ACP_SDK_DIR", "dist/v1/stable/acp.js",
		"npm install --prefix /tmp/acp @agentclientprotocol/sdk@2.4.0 and set ACP_SDK_DIR=/tmp/acp/node_modules/@agentclientprotocol/sdk")
	testdata := testdataDir(t)
	tests := []struct {
		mode    string
		resetIn time.Duration
		flags   []string
		said    string
		calls   int // requests the fake saw in all
	}{
		{"resume", 3 * time.Second, []string{"--wait-for-reset"}, "was interrupted; resuming it", 3},
		{"note", 3 * time.Second, nil, "was interrupted; --wait-for-reset resumes it", 1},
		{"cancel", 2 * time.Hour, []string{"--wait-for-reset"}, "was interrupted; resuming it", 1},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			home := isolate(t)
			tz, loc := childZone(t)
			t.Setenv("TZ", strings.TrimPrefix(tz, "TZ="))
			if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retry":{"waitForReset":{"marginMs":0}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			dir, _ := os.Getwd()
			srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: tt.resetIn},
				llmtest.Step{Text: "the refactor is done"}, llmtest.Step{Text: "and this is next"})
			target := []string{"--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}
			first := exec.Command(os.Args[0], append([]string{"--wait-for-reset", "-p", "refactor it"}, target...)...)
			first.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1")
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			w := waitInFile(t, home, first)
			first.Process.Kill()
			first.Wait()
			args, _ := json.Marshal(append(append([]string{}, tt.flags...), target...))
			var res struct {
				Note     string  `json:"note"`
				Resumed  bool    `json:"resumed"`
				Text     string  `json:"text"`
				CancelMs float64 `json:"cancelMs"`
			}
			runNode(t, node, filepath.Join(testdata, "acp-wait.mjs"), &res, "ACP_SDK_DIR="+sdkDir, "MODE="+tt.mode,
				"FILE="+sessionFiles(t, home)[0], "DIR="+dir, "RALLY_ARGS="+string(args), "WANT=the refactor is done", "NEXT=and this is next")
			want := "a usage-limit wait until " + w.Until.In(loc).Format("15:04") + " " + tt.said
			if res.Note != want || res.Resumed != (tt.flags != nil) {
				t.Errorf("the load said %q (resumed %v), want %q", res.Note, res.Resumed, want)
			}
			if n := len(srv.Requests()); n != tt.calls {
				t.Errorf("the fake saw %d requests, want %d: %+v", n, tt.calls, srv.Requests())
			}
			for _, r := range srv.Requests()[1:] {
				if r.Outcome == "http 429" {
					t.Errorf("the resumed wait retried before the reset: %+v", srv.Requests())
				}
			}
			if tt.mode == "cancel" {
				// The wait runs for 2 hours: ending it at all shows the cancel
				// reached it. How fast it ends is a benchmark figure
				// (`rally bench --only abort`), not a bound a loaded machine
				// could break here; the log below shows it.
				if res.CancelMs > 30_000 {
					t.Errorf("session/cancel ended the wait in %.0f ms, want it ended long before the reset", res.CancelMs)
				}
				t.Logf("session/cancel ended the resumed wait in %.1f ms", res.CancelMs)
			}
			if tt.mode == "resume" && !strings.Contains(res.Text, "Retrying (1/3) in") {
				t.Errorf("no retry line for the resumed wait: %q", res.Text)
			}
		})
	}
}
