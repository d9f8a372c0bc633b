package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/fleet/redistest"
	"github.com/rally-agent/rally/internal/proctest"
	"github.com/rally-agent/rally/llmtest"
	"github.com/rally-agent/rally/session"
)

// fleetHomes gives two rally homes (two machines) with the same two keys
// of the one-run provider acme, in that order, and points every process at
// redis.
// fleetTestSettings are the project settings of the fleet tests.
const fleetTestSettings = `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":2000}}`

func fleetHomes(t *testing.T, redisURL string) (homeA, homeB string) {
	t.Helper()
	isolate(t)
	homeA, homeB = t.TempDir(), t.TempDir()
	for _, home := range []string{homeA, homeB} {
		t.Setenv("RALLY_HOME", home)
		for _, c := range []struct{ id, key string }{{"one", testKeyA}, {"two", testKeyB}} {
			if _, errOut, code := run(t, c.key, "auth", "add", "acme", "--id", c.id, "--key", "-"); code != 0 {
				t.Fatalf("auth add: %s", errOut)
			}
		}
	}
	t.Setenv("RALLY_REDIS_URL", redisURL)
	// Redis gets 2 s a call rather than the default 200 ms: on a loaded
	// 2-core machine under -race a slow call would put the fleet in local
	// mode and the test would measure the fallback, not the sharing.
	// TestFleetRedisKilledMidRun sets the default back.
	writeProjectSettings(t, fleetTestSettings)
	return homeA, homeB
}

// rallyIn starts the test binary as rally with its own RALLY_HOME.
func rallyIn(t *testing.T, home string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RALLY_TEST_AS_MAIN=1", "RALLY_HOME="+home)
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out, errb
}

func acmeArgs(srv *llmtest.Server, model string) []string {
	return []string{"--mode", "json", "--no-session", "--provider", "acme", "--api", "openai-completions", "--base-url", srv.URL + "/v1", "--model", model, "-p", "hi"}
}

func wait(t *testing.T, cmd *exec.Cmd, errb *syncBuffer) {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rally: %v\n%s", err, errb.String())
	}
}

// TestFleetMarksAcrossMachines: A exhausts key one; B, another machine
// (another RALLY_HOME, so another marks file) started after, never uses it.
func TestFleetMarksAcrossMachines(t *testing.T) {
	rs := redistest.Start(t)
	homeA, homeB := fleetHomes(t, rs.URL)
	srv := llmtest.NewServer(t, usageLimited(testKeyA), llmtest.Step{Text: "ok"})

	cmd, _, errA := rallyIn(t, homeA, acmeArgs(srv, "m")...)
	wait(t, cmd, errA)
	cmd, out, errB := rallyIn(t, homeB, acmeArgs(srv, "m")...)
	wait(t, cmd, errB)

	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Credential != "sk-…1111" || reqs[1].Credential != "sk-…2222" || reqs[2].Credential != "sk-…2222" {
		t.Fatalf("requests %+v, want A: one, two; B: two", reqs)
	}
	if len(ofType(events(t, out.String()), "auto_retry_start")) != 0 {
		t.Errorf("B retried: it should have started on key two")
	}
	if ms := marksOf(t, homeB); len(ms) != 0 {
		t.Errorf("B's own marks file has %+v: the mark should have come from Redis", ms)
	}
	t.Setenv("RALLY_HOME", homeB)
	list, _, _ := run(t, "", "auth", "list")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "acme" && (f[1] == "one") != strings.Contains(line, "blocked until") {
			t.Errorf("B's rally auth list: %q, want only key one blocked (from Redis)", line)
		}
	}
	for name, text := range map[string]string{"A stderr": errA.String(), "B stderr": errB.String(), "B stdout": out.String(), "B auth list": list} {
		if strings.Contains(text, testKeyA) || strings.Contains(text, testKeyB) {
			t.Errorf("%s shows a key", name)
		}
	}
}

// TestFleetCooldownAcrossMachines: a 429 with retry-after: 3 seen by A
// holds B's next request on that key until the hinted time, and B never
// gets a 429 itself. (3 s, not 1: B, started after A's 429, must be up
// before the cooldown ends even on a loaded machine under -race.)
func TestFleetCooldownAcrossMachines(t *testing.T) {
	rs := redistest.Start(t)
	homeA, homeB := fleetHomes(t, rs.URL)
	limited := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.RateLimited, Header: map[string]string{"retry-after": "3"}}
	srv := llmtest.NewServer(t, limited, llmtest.Step{Text: "ok"})

	cmdA, _, errA := rallyIn(t, homeA, acmeArgs(srv, "model-a")...)
	// B starts once A's cooldown is in Redis, not once the fake has
	// answered A: between the two, A still reads the 429 and records it,
	// and a B started in that gap (a loaded machine) meets no cooldown.
	cooling := regexp.MustCompile(`(?m)^\s+acme\s+\S+\s+429\s`)
	proctest.Wait(t, "A's cooldown in Redis", func() bool {
		out, _, _ := run(t, "", "fleet", "status")
		return cooling.MatchString(out)
	})
	cmdB, outB, errB := rallyIn(t, homeB, acmeArgs(srv, "model-b")...)
	wait(t, cmdA, errA)
	wait(t, cmdB, errB)

	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Model != "model-a" || reqs[0].Outcome != "http 429" {
		t.Fatalf("requests %+v, want A's 429 first", reqs)
	}
	var b *llmtest.Request
	for i := range reqs[1:] {
		if r := &reqs[1+i]; r.Model == "model-b" {
			b = r
		}
	}
	if b == nil || b.Outcome != "ok" || b.Credential != "sk-…1111" {
		t.Fatalf("requests %+v, want one ok from B on key one", reqs)
	}
	if gap := b.Time.Sub(reqs[0].Time); gap < 2950*time.Millisecond {
		t.Errorf("B's request came %s after A's 429, want the hinted 3s", gap)
	}
	if !strings.Contains(errB.String(), "fleet: waiting") || !strings.Contains(errB.String(), "another agent got 429") {
		t.Errorf("B's stderr %q, want the visible wait", errB.String())
	}
	if n := len(ofType(events(t, outB.String()), "auto_retry_start")); n != 0 {
		t.Errorf("B retried %d times: it should never have met the 429", n)
	}
}

// fleetSessions is the child side of TestFleetBudget: one rally process
// running n sessions at once, each answering prompts prompts, built the way
// `rally -p` builds its session (newRunEnv). It prints "done N".
func fleetSessions(n, prompts int, args []string) int {
	f := runFlags{print: true, noSession: true, provider: "acme", api: "openai-completions", model: "m", baseURL: args[0]}
	s := streams{in: strings.NewReader(""), out: io.Discard, err: os.Stderr}
	rc, err := newRunConfig(s, &f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rc.close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range n {
		wg.Go(func() {
			env, err := newRunEnv(context.Background(), s, &f, rc)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			defer env.close()
			for range prompts {
				if err := env.sess.Prompt(context.Background(), "hi", session.PromptOptions{}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				mu.Lock()
				done++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Println("done", done)
	if done != n*prompts {
		return 1
	}
	return 0
}

// TestFleetBudget: 20 sessions in 2 processes on one key with a budget of
// 60 requests per minute send at most 60 in any minute, and every prompt
// completes. The minute is scaled to 3 s (windowMs) so the test takes
// seconds: 80 prompts, 20 more than one window allows.
func TestFleetBudget(t *testing.T) {
	rs := redistest.Start(t)
	// The window is counted over the grants on Redis's clock: the fake
	// LLM's arrivals trail them by however loaded the machine is.
	watch := rs.Watch()
	homeA, homeB := fleetHomes(t, rs.URL)
	const window = 3 * time.Second
	// Redis gets 2 s a call: a slower call (possible on a loaded 2-core
	// machine under -race) would put the fleet in local mode, where no
	// budget is enforced; the test fails on that warning instead.
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":2000,"budgets":{"acme":{"requestsPerMinute":60,"windowMs":3000}}}}`)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "ok"})
	t.Setenv("RALLY_TEST_SESSIONS", "10x4")
	var cmds []*exec.Cmd
	var outs, errs []*syncBuffer
	for _, home := range []string{homeA, homeB} {
		cmd, out, errb := rallyIn(t, home, srv.URL+"/v1")
		cmds, outs, errs = append(cmds, cmd), append(outs, out), append(errs, errb)
	}
	for i, cmd := range cmds {
		wait(t, cmd, errs[i])
		if got := strings.TrimSpace(outs[i].String()); got != "done 40" {
			t.Errorf("process %d: %q, want done 40; stderr:\n%s", i, got, errs[i].String())
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 80 {
		t.Fatalf("%d requests, want 80", len(reqs))
	}
	var ts []time.Time
	for _, r := range reqs {
		ts = append(ts, r.Time)
	}
	grants := watch.BudgetGrants(60, window)
	if len(grants) != 80 {
		t.Fatalf("%d budget grants in redis, want 80", len(grants))
	}
	most := redistest.Busiest(grants, window)
	if most > 60 {
		t.Errorf("%d requests granted within one %s window, want at most 60", most, window)
	}
	if k := redistest.Early(ts, grants, time.Millisecond); k >= 0 {
		t.Errorf("request %d reached the LLM before its grant", k)
	}
	if all := errs[0].String() + errs[1].String(); strings.Contains(all, "working locally") {
		t.Errorf("the fleet left shared mode, so the budget was not enforced:\n%s", all)
	}
	if !strings.Contains(errs[0].String()+errs[1].String(), "request budget of acme") {
		t.Errorf("no visible budget wait on stderr")
	}
	t.Logf("80 requests in %s; busiest window %d", reqs[79].Time.Sub(reqs[0].Time), most)
}

// TestFleetRedisKilledMidRun: one long-lived rally (rpc mode) keeps
// answering while Redis is gone, with one warning and no wait past the
// timeout, and shares again once Redis is back.
func TestFleetRedisKilledMidRun(t *testing.T) {
	rs := redistest.Start(t)
	homeA, _ := fleetHomes(t, rs.URL)
	// A stopped Redis refuses connections at once, so the prompts while it
	// is down stay far under the 2 s bound whatever the timeout; 1 s keeps
	// a loaded machine from timing out the calls after the restart (which
	// would send the mark to the local file only).
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":1000}}`)
	srv := llmtest.NewServer(t, llmtest.Step{Text: "ok"}, llmtest.Step{Text: "ok"}, llmtest.Step{Text: "ok"}, usageLimited(testKeyA), llmtest.Step{Text: "ok"})
	t.Setenv("RALLY_HOME", homeA)
	p := startRPC(t, "--no-session", "--provider", "acme", "--api", "openai-completions", "--base-url", srv.URL+"/v1", "--model", "m")
	prompt := func(id string) time.Duration {
		start := time.Now()
		if r := p.call(id, `{"type":"prompt","message":"hi"}`); r["success"] != true {
			t.Fatalf("prompt %s: %v", id, r)
		}
		p.event("agent_settled")
		return time.Since(start)
	}
	prompt("1")
	rs.Stop()
	for _, id := range []string{"2", "3"} {
		if d := prompt(id); d > 2*time.Second {
			t.Errorf("prompt %s took %s with redis down", id, d)
		}
	}
	if n := strings.Count(p.stderrText(), "is not answering"); n != 1 {
		t.Errorf("%d warnings on stderr, want one:\n%s", n, p.stderrText())
	}
	rs.Restart()
	// The process logs when its reconnect ping (every second) succeeds.
	proctest.Wait(t, "rally to reconnect", func() bool {
		logs, _ := os.ReadFile(filepath.Join(homeA, "logs", "rally.log"))
		return bytes.Contains(logs, []byte("redis is back"))
	})
	prompt("4") // key one hits its usage limit: the mark must reach Redis again
	reqs := srv.Requests()
	if len(reqs) != 5 || reqs[3].Credential != "sk-…1111" || reqs[4].Credential != "sk-…2222" {
		t.Fatalf("requests %+v", reqs)
	}
	f, err := fleet.Open(fleet.Config{URL: rs.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := (&fleet.Marks{Fleet: f}).Blocked(t.Context(), "acme")
	if err != nil || len(ms) != 1 || ms[0].ID != "one" || ms[0].Key != auth.Fingerprint(testKeyA) {
		t.Errorf("marks in the restarted redis %+v (%v), want key one's", ms, err)
	}
}

// TestFleetStatus: rally fleet status shows what Redis holds, with
// fingerprints and ids and never a key or the password.
func TestFleetStatus(t *testing.T) {
	rs := redistest.Start(t)
	homeA, _ := fleetHomes(t, rs.URL)
	t.Setenv("RALLY_HOME", homeA)
	srv := llmtest.NewServer(t, usageLimited(testKeyA), llmtest.Step{Text: "ok"})
	if _, errOut, code := run(t, "", acmeArgs(srv, "m")...); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "", "fleet", "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fp := auth.Fingerprint(testKeyA)
	for _, want := range []string{"redis " + rs.Addr, "usage-limit marks", "acme", "one", fp, "cooldowns\n  none", "breakers"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{testKeyA, testKeyB} {
		if strings.Contains(out+errOut, secret) {
			t.Errorf("status shows %q", secret)
		}
	}
	t.Setenv("RALLY_REDIS_URL", "")
	if _, errOut, code := run(t, "", "fleet", "status"); code != 2 || !strings.Contains(errOut, "no fleet") {
		t.Errorf("without a fleet: exit %d, %q", code, errOut)
	}
}

// TestFleetPasswordNotInSettings refuses a settings file with the Redis
// password in its URL, without quoting the password.
func TestFleetPasswordNotInSettings(t *testing.T) {
	isolate(t)
	writeProjectSettings(t, `{"fleet":{"redis":"redis://:hunter2@127.0.0.1:1"}}`)
	_, errOut, code := run(t, "", "-p", "hi")
	if code != 2 || strings.Contains(errOut, "hunter2") || !strings.Contains(errOut, "fleet.redis") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestFleetPasswordNotSet: rally settings set refuses a fleet.redis with a
// password, writes nothing and never prints the password.
func TestFleetPasswordNotSet(t *testing.T) {
	home := isolate(t)
	out, errOut, code := run(t, "", "settings", "set", "fleet.redis", "redis://:hunter2@127.0.0.1:1")
	if code != 2 || strings.Contains(out+errOut, "hunter2") || !strings.Contains(errOut, "fleet.redis: must not hold the Redis password") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(home, "settings.json")); err == nil && strings.Contains(string(b), "hunter2") {
		t.Errorf("the password was written: %s", b)
	}
}

// sessionsEnv parses RALLY_TEST_SESSIONS ("10x4": 10 sessions, 4 prompts).
func sessionsEnv(v string) (n, prompts int, ok bool) {
	a, b, ok := strings.Cut(v, "x")
	n, err1 := strconv.Atoi(a)
	prompts, err2 := strconv.Atoi(b)
	return n, prompts, ok && err1 == nil && err2 == nil
}

// TestFleetStatusREADME builds a fleet's state with real runs (a usage
// limit on key one, a 503 with retry-after on key two, a budget and a
// breaker) and checks that rally fleet status prints what the README shows,
// times and the refilled budget aside. FLEET_README=update writes the
// output into README.md.
func TestFleetStatusREADME(t *testing.T) {
	readmePath, err := filepath.Abs("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	homeA, _ := fleetHomes(t, rs.URL)
	t.Setenv("RALLY_HOME", homeA)
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":2000,"budgets":{"acme":{"requestsPerMinute":60}},"breaker":{"failures":2}}}`)
	busy := llmtest.Step{Fault: llmtest.HTTPError, Error: llmtest.Overloaded, Header: map[string]string{"retry-after": "120"}}
	srv := llmtest.NewServer(t, usageLimited(testKeyA), busy)
	clock := morningClock()                    // the marks' times of day are printed
	runAt(t, clock, "", acmeArgs(srv, "m")...) // fails: the 503's wait is past maxDelayMs
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want key one's usage limit and key two's 503", n)
	}
	out, errOut, code := runAt(t, clock, "", "fleet", "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out = strings.ReplaceAll(out, rs.Addr, "127.0.0.1:6379")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "$ rally fleet status\n", "```"
	i := bytes.Index(readme, []byte(start))
	if i < 0 {
		t.Fatal("README has no rally fleet status example")
	}
	i += len(start)
	j := i + bytes.Index(readme[i:], []byte(end))
	if os.Getenv("FLEET_README") == "update" {
		os.WriteFile(readmePath, slices.Concat(readme[:i], []byte(out), readme[j:]), 0o644)
		return
	}
	if got, want := normalStatus(out), normalStatus(string(readme[i:j])); got != want {
		t.Errorf("rally fleet status printed\n%s\nthe README shows\n%s", got, want)
	}
}

var (
	clock    = regexp.MustCompile(`\d\d:\d\d \(in [^)]*\)`)
	budgetIn = regexp.MustCompile(`(?m)^(  acme +[0-9a-f]{16} +)\d+`)
)

// normalStatus blanks what changes from run to run: times, and the budget
// left (it refills while the test runs).
func normalStatus(s string) string {
	s = clock.ReplaceAllString(s, "HH:MM (in …)")
	return budgetIn.ReplaceAllString(s, "${1}N")
}

// TestFleetPassword: the password comes from the variable passwordEnv
// names and shows up nowhere.
func TestFleetPassword(t *testing.T) {
	const password = "hunter2-redis-password"
	rs := redistest.Start(t, "--requirepass", password)
	homeA, _ := fleetHomes(t, "")
	t.Setenv("RALLY_HOME", homeA)
	writeProjectSettings(t, `{"retry":{"baseDelayMs":1},"fleet":{"timeoutMs":2000,"redis":"`+rs.URL+`","passwordEnv":"TEAM_REDIS_PASSWORD"}}`)
	t.Setenv("TEAM_REDIS_PASSWORD", password)
	srv := llmtest.NewServer(t, usageLimited(testKeyA), llmtest.Step{Text: "ok"})
	out1, err1, code := run(t, "", acmeArgs(srv, "m")...)
	if code != 0 {
		t.Fatal(err1)
	}
	out2, err2, code := run(t, "", "fleet", "status")
	if code != 0 || !strings.Contains(out2, auth.Fingerprint(testKeyA)) {
		t.Fatalf("exit %d: %s%s", code, out2, err2)
	}
	t.Setenv("TEAM_REDIS_PASSWORD", "wrong-"+password)
	out3, err3, code := run(t, "", "fleet", "status")
	if code == 0 || !strings.Contains(err3, "WRONGPASS") {
		t.Errorf("a wrong password: exit %d, %q", code, err3)
	}
	logs, _ := os.ReadFile(filepath.Join(homeA, "logs", "rally.log"))
	if all := out1 + err1 + out2 + err2 + out3 + err3 + string(logs); strings.Contains(all, password) {
		t.Errorf("the password shows:\n%s", all)
	}
}
