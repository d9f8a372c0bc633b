package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llmtest"
)

// planLimit is a usage limit that states no reset at all.
const planLimit = `{"error":{"message":"You have hit your plan usage limit.","type":"usage_limit_reached","code":"usage_limit_reached"}}`

// TestLearnedResetWait: a rally whose usage limit stated a reset 3 s away
// gives up (maxDelayMs 1 s) and marks the key; a second rally with
// --wait-for-reset meets a limit that states no reset, and waits until the
// reset the first one learned instead of backing off, then answers. With
// no mark to learn from it backs off within maxDelayMs.
func TestLearnedResetWait(t *testing.T) {
	for _, learn := range []bool{true, false} {
		t.Run(map[bool]string{true: "learned", false: "nothing to learn"}[learn], func(t *testing.T) {
			home := isolate(t)
			if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retry":{"maxDelayMs":1000,"baseDelayMs":100,"waitForReset":{"marginMs":0}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "RALLY_TEST_AS_MAIN=1", "TZ=UTC", "RALLY_API_KEY=sk-test-0000000000005678")
			args := func(srv *llmtest.Server, more ...string) []string {
				return append([]string{"--no-session", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", "m"}, more...)
			}
			var reset time.Time // the reset the first rally was told
			if learn {
				stated := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 3 * time.Second})
				first := exec.Command(os.Args[0], args(stated, "-p", "refactor it")...)
				first.Env = env
				if out, err := first.CombinedOutput(); err == nil || !strings.Contains(string(out), "longer than maxDelayMs") {
					t.Fatalf("the first rally: %v\n%s", err, out)
				}
				var f struct{ Marks []auth.Mark }
				b, _ := os.ReadFile(filepath.Join(home, "auth-marks.json"))
				if json.Unmarshal(b, &f) != nil || len(f.Marks) != 1 || f.Marks[0].Reset.IsZero() {
					t.Fatalf("auth-marks.json %s, want the stated reset", b)
				}
				reset = f.Marks[0].Reset
			}
			silent := llmtest.NewServer(t, llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.UsageLimit, Body: planLimit}, llmtest.Step{Text: "the refactor is done"})
			began := time.Now()
			second := exec.Command(os.Args[0], args(silent, "--wait-for-reset", "-p", "refactor it")...)
			second.Env = env
			var stdout, stderr bytes.Buffer
			second.Stdout, second.Stderr = &stdout, &stderr
			if err := second.Run(); err != nil {
				t.Fatalf("the second rally: %v\n%s", err, stderr.String())
			}
			took := time.Since(began)
			if stdout.String() != "the refactor is done\n" {
				t.Errorf("stdout %q", stdout.String())
			}
			waited := strings.Contains(stderr.String(), "waiting for the reset at")
			// With nothing learned it backs off as for any 429, within
			// maxDelayMs: the delay it announces says so, whatever the
			// machine's load (a wall-clock bound on two processes would not).
			backoff := regexp.MustCompile(`retrying \(1/\d+\) in (\d+)ms: `).FindStringSubmatch(stderr.String())
			backedOff := false
			if backoff != nil {
				ms, _ := strconv.Atoi(backoff[1])
				backedOff = ms <= 1000
			}
			if waited != learn || (learn && time.Now().Before(reset)) || (!learn && !backedOff) {
				t.Errorf("took %v, waited for a reset %v, want %v (reset %v):\n%s", took, waited, learn, reset, stderr.String())
			}
			if said := strings.Contains(stderr.String(), "s, as an earlier limit stated), then retry 1; Ctrl-C cancels"); said != learn {
				t.Errorf("print mode says the reset was learned: %v, want %v:\n%s", said, learn, stderr.String())
			}
			t.Logf("answered after %v:\n%s", took, stderr.String())
		})
	}
}
