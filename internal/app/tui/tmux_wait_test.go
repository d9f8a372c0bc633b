package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rally-agent/rally/internal/zonetest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session/journal"
)

// waitZone is the zone a wait test pins, for rally as TZ and for the test
// to read the times shown in: one in which the test starts at 09:30, so a
// reset hours away is on the same day at every hour the test runs (shown
// as "15:04", never "Dec 3 00:11"). Where 09:30 is within an hour of UTC
// it starts at 04:30 instead, so a time shown in UTC cannot pass.
func waitZone(t *testing.T) (env string, loc *time.Location) {
	now := time.Now()
	loc = zonetest.At(now, 9*time.Hour+30*time.Minute)
	if _, off := now.In(loc).Zone(); off > -3600 && off < 3600 {
		loc = zonetest.At(now, 4*time.Hour+30*time.Minute)
	}
	return "TZ=" + zonetest.File(t, loc), loc
}

// resetAt reads the "resumes at HH:MM" of s and checks it against the
// reset the fake LLM stated at some moment from began to now, in loc.
func resetAt(t *testing.T, s string, loc *time.Location, began time.Time, in time.Duration) {
	t.Helper()
	m := regexp.MustCompile(`resumes at (\d\d:\d\d)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no reset time shown:\n%s", s)
	}
	lo, hi := began.Add(in).In(loc).Format("15:04"), time.Now().Add(in).In(loc).Format("15:04")
	if m[1] != lo && m[1] != hi {
		t.Fatalf("resumes at %s, want %s (the reset in the test's zone)", m[1], lo)
	}
}

// TestTmuxResetCountdown: under retry.waitForReset a usage limit that
// resets in 2h 13m shows as the loader "usage limit · resumes at HH:MM (in
// 2h 13m) · esc to cancel", the time of day in the local zone; the status
// line keeps "resumes at HH:MM (in 2h 13m)"; Esc ends the wait at once,
// with no further request.
func TestTmuxResetCountdown(t *testing.T) {
	in := 2*time.Hour + 13*time.Minute
	srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: in}, llmtest.Step{Text: "too early"})
	tz, loc := waitZone(t)
	began := time.Now()
	p := startRallyEnv(t, t.TempDir(), []string{tz}, srv, 100, 24,
		`{"retry":{"waitForReset":{"enabled":true,"marginMs":0}}}`, "Refactor it")
	s := p.waitText("(in 2h 13m) · esc to cancel")
	if !regexp.MustCompile(`usage limit · resumes at \d\d:\d\d \(in 2h 13m\) · esc to cancel`).MatchString(s) {
		t.Fatalf("no reset loader:\n%s", s)
	}
	resetAt(t, s, loc, began, in)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`resumes at \d\d:\d\d \(in 2h 13m\)`).MatchString(last) {
		t.Fatalf("the status line %q does not keep the wait:\n%s", last, s)
	}
	esc := time.Now()
	p.keys("Escape")
	s = p.waitFor("the wait cancelled", func(s string) bool { return strings.Contains(s, "Retry cancelled") && idle(s) })
	if d := time.Since(esc); d > 2*time.Second {
		t.Errorf("Esc ended the wait after %v", d)
	}
	if strings.Contains(s, "esc to cancel") {
		t.Fatalf("the loader stayed after Esc:\n%s", s)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after Esc, want the limited one only", n)
	}
}

// TestTmuxResumeWaitQuestion: rally --continue on a session whose rally
// was killed during a wait for a reset asks "A usage-limit wait until
// HH:MM was interrupted; resume waiting? (y/n)"; y resumes it, with the
// countdown, and the interrupted prompt is answered after the reset; n
// leaves it, sending nothing.
func TestTmuxResumeWaitQuestion(t *testing.T) {
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			needTmux(t)
			dir := t.TempDir()
			tz, loc := waitZone(t)
			home := filepath.Join(dir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t, llmtest.Step{Error: llmtest.UsageLimit, ResetIn: 4 * time.Second}, llmtest.Step{Text: "the refactor is done"})
			first := exec.Command(rallyBinary(t), append(fakeFlags(srv), "--wait-for-reset", "-p", "Refactor it")...)
			first.Dir, first.Env = dir, append(os.Environ(), "RALLY_HOME="+home, "HOME="+home, tz)
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			w := interruptedIn(t, home, first)
			first.Process.Kill()
			first.Wait()

			p := startRallyEnv(t, dir, []string{tz}, srv, 100, 24,
				`{"retry":{"waitForReset":{"marginMs":0}}}`, "--continue")
			s := p.waitText("resume waiting? (y/n)")
			if !regexp.MustCompile(`A usage-limit wait until \d\d:\d\d was interrupted; resume waiting\? \(y/n\)`).MatchString(s) {
				t.Fatalf("no question:\n%s", s)
			}
			if want := "wait until " + w.Until.In(loc).Format("15:04") + " was"; !strings.Contains(s, want) {
				t.Fatalf("the question does not say %q (the recorded wait's end in the test's zone):\n%s", want, s)
			}
			p.keys(answer)
			if answer == "n" {
				p.waitText("The interrupted wait is not resumed")
				if n := len(srv.Requests()); n != 1 {
					t.Fatalf("%d requests after n, want the limited one only", n)
				}
				return
			}
			s = p.waitText("· esc to cancel")
			if !strings.Contains(s, "usage limit · resumes at") {
				t.Fatalf("no countdown for the resumed wait:\n%s", s)
			}
			p.waitFor("the interrupted prompt's answer", func(s string) bool { return strings.Contains(s, "the refactor is done") && idle(s) })
			if time.Now().Before(w.Until) {
				t.Fatalf("answered before the reset at %v", w.Until)
			}
			if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].Outcome == "http 429" {
				t.Fatalf("requests %+v, want the limited one and one after the reset", reqs)
			}
		})
	}
}

// interruptedIn waits until cmd's session file under home records a wait
// for a reset.
func interruptedIn(t *testing.T, home string, cmd *exec.Cmd) *journal.Wait {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
		if len(files) == 1 {
			if w, _ := journal.InterruptedWait(files[0]); w != nil {
				return w
			}
		}
	}
	cmd.Process.Kill()
	t.Fatal("rally recorded no wait for the reset")
	return nil
}
