package web

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSessionsList(t *testing.T) {
	e := newEnv(t)
	old := retrySession("11111111-1111-4111-8111-111111111111")
	old.write(t, e.sessions)
	// A newer session: its file name's time is later.
	newer := newFixtureAt("22222222-2222-4222-8222-222222222222", t0.Add(time.Hour))
	newer.user(newer.at(0), "Second prompt")
	newer.call(newer.at(10), newer.at(1510), "", "401 invalid x-api-key", false)
	newer.write(t, e.sessions)
	writeFile(t, e.sessions+"/notes.txt", "not a session")
	writeFile(t, e.sessions+"/2026-01-01T00-00-00-000Z_broken.jsonl", "not json\n")

	code, page := e.get(t, "/sessions")
	if code != 200 {
		t.Fatal(code)
	}
	rows := regexp.MustCompile(`(?s)<tr><td>.*?</tr>`).FindAllString(page, -1)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), page)
	}
	cells := func(row string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row, -1) {
			out = append(out, regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], ""))
		}
		return out
	}
	// Newest first: started, title, model, messages, retries, failed, duration.
	if c := cells(rows[0]); c[1] != "Second prompt" || c[2] != "anthropic/claude-sonnet-4-5" || c[3] != "2" || c[4] != "0" || c[5] != "1" || c[6] != "1.5s" {
		t.Errorf("newest row %q", c)
	}
	if c := cells(rows[1]); c[1] != "What does rally do?" || c[3] != "2" || c[4] != "1" || c[5] != "0" || c[6] != "3.5s" {
		t.Errorf("older row %q", c)
	}
	if c := cells(rows[2]); !strings.Contains(c[1], "no session header") {
		t.Errorf("broken file row %q", c)
	}
}

func TestSessionTimeline(t *testing.T) {
	e := newEnv(t)
	j := retrySession("33333333-3333-4333-8333-333333333333")
	j.tool(j.at(3600), j.at(4000), j.at(5000), "bash", `{"command":"ls"}`, "go.mod")
	j.compaction(j.at(5100), "Asked what rally does.")
	j.user(j.at(60000), "Later prompt, after a minute away")
	// A stream that broke after some output: its message carries its
	// start; it failed at 60800, unseen in the file, and waited 2 s.
	j.call(j.at(60010), j.at(62800), "partial answ", "stream idle for 30s", true)
	j.call(j.at(62800), j.at(63300), "Sure.", "", false)
	name := j.write(t, e.sessions)

	v, err := loadSession(e.sessions, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := drawTimeline(v)
	var failed []tlBar
	var calls, tools int
	for _, b := range tl.Bars {
		switch b.Class {
		case "call failed":
			failed = append(failed, b)
		case "call":
			calls++
		case "tool":
			tools++
		}
	}
	if len(failed) != 2 || calls != 3 || tools != 1 {
		t.Fatalf("bars: %d failed, %d calls, %d tools", len(failed), calls, tools)
	}
	if len(tl.Waits) != 2 || tl.Waits[0].Label != "wait 2.0s" || tl.Waits[1].Label != "wait 2.0s" {
		t.Fatalf("waits %+v", tl.Waits)
	}
	if len(tl.Failures) != 2 || tl.Failures[0].Class != "transient" || !strings.HasPrefix(tl.Failures[0].Outcome, "retry 1 after") {
		t.Errorf("failures %+v", tl.Failures)
	}
	if len(tl.Marks) != 1 || !strings.Contains(tl.Marks[0].Label, "compaction") {
		t.Errorf("marks %+v", tl.Marks)
	}
	if len(tl.Breaks) != 1 || tl.Breaks[0].Label != "idle 54.9s" {
		t.Errorf("breaks %+v", tl.Breaks)
	}
	// Each wait lies between its failed bar's end and the retry's start,
	// and the bars keep the calls' own lengths: 500 ms, then 790 ms.
	perMs := tl.Waits[0].W / 2000
	for i, w := range tl.Waits {
		f := failed[i]
		if d := w.X - (f.X + f.W); d < -0.01 || d > 0.01 {
			t.Errorf("wait %d starts at %.1f, its failed bar ends at %.1f", i, w.X, f.X+f.W)
		}
	}
	for i, want := range []float64{500, 790} {
		if got := failed[i].W / perMs; got < want-1 || got > want+1 {
			t.Errorf("failed call %d drawn %.0f ms long, want %.0f", i, got, want)
		}
	}
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatal(code)
	}
	// The transcript gives the failed call its own length, not its wait's.
	for _, s := range []string{`<rect class="call failed"`, `<text class="wait-label"`, ">wait 2.0s</text>", "529 overloaded_error: Overloaded", "<b class=\"class\">transient</b>",
		`<span class="dim">500ms · 10 in / 5 out</span>`, `<span class="dim">790ms · 10 in / 5 out</span>`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %s", s)
		}
	}
}

// The waits are what the file recorded rally waited, whatever the
// settings say now; a file that did not record them (older rally, pi)
// gets the default policy's: a second retry waits twice as long, and a
// server's hint is followed.
func TestTimelineWaitsFollowSettings(t *testing.T) {
	for _, tc := range []struct {
		name, settings, errMsg string
		waits                  [2]int // what rally waited, in ms
		want                   []string
	}{
		{"defaults", ``, "503 overloaded", [2]int{2000, 4000}, []string{"wait 2.0s", "wait 4.0s"}},
		{"recorded", `{"retry": {"baseDelayMs": 9000}}`, "503 overloaded", [2]int{500, 1000}, []string{"wait 500ms", "wait 1.0s"}},
		{"retries since lowered", `{"retry": {"maxRetries": 0}}`, "503 overloaded", [2]int{2000, 4000}, []string{"wait 2.0s", "wait 4.0s"}},
		{"server hint", ``, "429 rate limit: Please try again in 7s", [2]int{7000, 7000}, []string{"wait 7.0s", "wait 7.0s"}},
		{"text not retryable alone", ``, "stream idle for 30s", [2]int{2000, 4000}, []string{"wait 2.0s", "wait 4.0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.settings != "" {
				writeFile(t, e.src.Global.Path, tc.settings)
			}
			j := newFixture("99999999-1111-4111-8111-111111111111")
			j.user(j.at(0), "go")
			// A stream that failed at 800 after some output (its message
			// has its start), then a call that failed at once (its
			// message has the failure's time), each written when its
			// wait was over; then success. The waits are not in the file.
			w1 := 800 + tc.waits[0]
			j.call(j.at(100), j.at(w1), "streamed a bit", tc.errMsg, true)
			if tc.name == "recorded" {
				j.decided(`{"attempt":1,"delayMs":500,"class":"transient"}`)
			}
			j.call(j.at(w1+100), j.at(w1+100+tc.waits[1]), "", tc.errMsg, true)
			if tc.name == "recorded" {
				j.decided(`{"attempt":2,"delayMs":1000,"class":"transient"}`)
			}
			j.call(j.at(w1+100+tc.waits[1]), j.at(w1+tc.waits[1]+900), "ok", "", false)
			name := j.write(t, e.sessions)
			_, page := e.get(t, "/sessions/"+name)
			var got []string
			for _, m := range regexp.MustCompile(`<text class="wait-label"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(page, -1) {
				got = append(got, m[1])
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("waits %q, want %q", got, tc.want)
			}
		})
	}
}

// hostile is text that would run script if a page inserted it unescaped.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"></pre><svg onload="window.pwned=3">`

// scriptSession puts hostile text everywhere a session file can hold it.
func scriptSession(id string) *fixture {
	j := newFixture(id)
	j.entry("session_info", j.at(0), `"name":`+js("name "+hostile))
	j.user(j.at(0), "user "+hostile)
	j.call(j.at(10), j.at(20), "", "500 "+hostile, true)
	j.call(j.at(30), j.at(40), "answer "+hostile, "", false)
	j.tool(j.at(50), j.at(60), j.at(70), "bash"+hostile, `{"command":`+js(hostile)+`}`, "output "+hostile)
	j.compaction(j.at(80), "summary "+hostile)
	return j
}

func TestSessionScriptInert(t *testing.T) {
	e := newEnv(t)
	name := scriptSession("44444444-4444-4444-8444-444444444444").write(t, e.sessions)
	for _, p := range []string{"/sessions", "/sessions/" + name} {
		code, page := e.get(t, p)
		if code != 200 {
			t.Fatal(p, code)
		}
		low := strings.ToLower(page)
		for _, bad := range []string{"<script", "<img", `onerror="`, `onload="`, "<svg onload"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s holds %q", p, bad)
			}
		}
		if !strings.Contains(page, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
			t.Errorf("%s does not show the text escaped", p)
		}
	}
}

func TestSessionNameChecked(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.home+"/secret.jsonl", `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`)
	for _, p := range []string{"/sessions/..%2Fhome%2Fsecret.jsonl", "/sessions/.hidden.jsonl", "/sessions/nope.jsonl", "/sessions/x.txt"} {
		if code, _ := e.get(t, p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

func TestSummariesCache(t *testing.T) {
	e := newEnv(t)
	j := retrySession("55555555-5555-4555-8555-555555555555")
	j.write(t, e.sessions)
	s := newSummaries(e.sessions, nil)
	a, _, err := s.list(context.Background(), 0, -1)
	if err != nil || len(a) != 1 || a[0].Messages != 2 {
		t.Fatalf("%+v %v", a, err)
	}
	// The file grows: the summary follows.
	j.user(j.at(4000), "more")
	j.write(t, e.sessions)
	b, _, _ := s.list(context.Background(), 0, -1)
	if b[0].Messages != 3 {
		t.Errorf("after an append: %d messages", b[0].Messages)
	}
}

func TestSessionsPages(t *testing.T) {
	e := newEnv(t)
	for i := range 250 {
		j := newFixtureAt(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), t0.Add(time.Duration(i)*time.Minute))
		j.user(j.at(0), fmt.Sprintf("prompt %03d", i))
		j.write(t, e.sessions)
	}
	titles := func(page string) []string {
		_, body := e.get(t, page)
		var out []string
		for _, m := range regexp.MustCompile(`>prompt (\d+)</a>`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, tc := range []struct {
		page        string
		n           int
		first, last string
	}{
		{"/sessions", 100, "249", "150"},
		{"/sessions?page=2", 100, "149", "050"},
		{"/sessions?page=3", 50, "049", "000"},
		{"/sessions?page=4", 0, "", ""},
		{"/sessions?all=1", 250, "249", "000"},
	} {
		got := titles(tc.page)
		if len(got) != tc.n || tc.n > 0 && (got[0] != tc.first || got[len(got)-1] != tc.last) {
			t.Errorf("%s: %d rows %v…", tc.page, len(got), got[:min(len(got), 3)])
		}
	}
	_, body := e.get(t, "/sessions?page=2")
	if !strings.Contains(body, "101–200 of 250") || !strings.Contains(body, `href="`+e.srv.Base()+`sessions?page=1"`) || !strings.Contains(body, `href="`+e.srv.Base()+`sessions?page=3"`) {
		t.Error("page 2 lacks its position or links")
	}
}

// A session pi wrote, with its own entry and message kinds, shows whole.
func TestPiSession(t *testing.T) {
	e := newEnv(t)
	j := newFixture("88888888-8888-4888-8888-888888888888")
	j.entry("model_change", j.at(0), `"provider":"anthropic","modelId":"claude-sonnet-4-5"`)
	j.entry("message", j.at(10), `"message":{"role":"user","content":"plain string content","timestamp":1}`)
	j.entry("message", j.at(20), `"message":{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"timestamp":2}`)
	j.entry("label", j.at(30), `"targetId":"00000001","label":"start"`)
	j.entry("branch_summary", j.at(40), `"fromId":"00000002","summary":"Went elsewhere."`)
	j.entry("session_info", j.at(50), `"name":"Pi's session"`)
	j.lines = append(j.lines, `{"type":"message","id":"torn","parentId":"00000006","timest`)
	name := j.write(t, e.sessions)
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatal(code)
	}
	for _, want := range []string{"<h1>Pi&#39;s session</h1>", "model changed to <code>anthropic/claude-sonnet-4-5</code>",
		"plain string content", "User (bashExecution)", "git status", "label entry", "branch_summary entry: Went elsewhere.", "line 8: corrupt entry skipped"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestLongOutputFolded(t *testing.T) {
	e := newEnv(t)
	j := newFixture("12121212-1212-4121-8121-121212121212")
	j.user(j.at(0), "run it")
	j.tool(j.at(10), j.at(20), j.at(30), "bash", `{"command":"seq 40"}`, strings.TrimSuffix(strings.Repeat("line\n", 40), "\n"))
	j.call(j.at(40), j.at(50), "short answer", "", false)
	_, page := e.get(t, "/sessions/"+j.write(t, e.sessions))
	if strings.Count(page, `<details class="long"><summary>40 lines</summary>`) != 1 || !strings.Contains(page, `<pre class="text">short answer</pre>`) {
		t.Error("the 40-line output is not folded, or the short answer is")
	}
}

// TestSessionPageRedactsKeys: the console shows no key a session file
// holds: a known key (of no well-known shape) and key-shaped tokens it
// does not know, in prompts, answers, errors, tool calls and titles.
func TestSessionPageRedactsKeys(t *testing.T) {
	const known = "zzSECRETRALLYKEY0000999"
	const shaped = "sk-proj-ABCDEFGHIJ0123456789"
	e := newEnvKeys(t, []string{known})
	j := newFixture("44444444-4444-4444-8444-444444444444")
	j.user(j.at(0), "use "+shaped+" and "+known)
	j.call(j.at(10), j.at(500), "", "401 invalid key "+shaped, true)
	j.tool(j.at(600), j.at(900), j.at(1000), "bash", `{"command":"echo `+known+`"}`, "AIzaSyD0123456789abcdefghij")
	j.call(j.at(1100), j.at(1500), "Noted "+known+".", "", false)
	name := j.write(t, e.sessions)
	for _, path := range []string{"/sessions/" + name, "/sessions"} {
		code, page := e.get(t, path)
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		for _, secret := range []string{known, known[:12], "ABCDEFGHIJ0123456789", "D0123456789abcdefghij"} {
			if strings.Contains(page, secret) {
				t.Errorf("%s shows a key (ending %q)", path, secret[len(secret)-4:])
			}
		}
		if !strings.Contains(page, "[redacted]") {
			t.Errorf("%s: no [redacted]", path)
		}
	}
	if _, page := e.get(t, "/sessions/"+name); strings.Count(page, "[redacted]") < 6 {
		t.Errorf("%d [redacted] on the session page, want at least 6", strings.Count(page, "[redacted]"))
	}
}

// TestSessionHeaderCounts: the header counts the model calls and says how
// the failed ones ended, so it agrees with the timeline's red bars (it
// used to say "1 retried call(s) · 0 failed" beside a red bar).
func TestSessionHeaderCounts(t *testing.T) {
	e := newEnv(t)
	lede := regexp.MustCompile(`<p class="lede">(.*?)</p>`)
	cases := []struct {
		name  string
		build func(j *fixture)
		want  string
	}{
		{"one retried failure", func(j *fixture) {
			j.user(j.at(0), "hi")
			j.call(j.at(10), j.at(500), "", "503 overloaded", true)
			j.call(j.at(2500), j.at(3000), "Hello.", "", false)
		}, "2 messages · 2 model calls · 1 failed and retried · last model"},
		{"a final failure", func(j *fixture) {
			j.user(j.at(0), "hi")
			j.call(j.at(10), j.at(500), "", "503 overloaded", true)
			j.call(j.at(2500), j.at(3000), "", "503 overloaded", false)
		}, "2 messages · 2 model calls · 1 failed and retried · 1 failed, not retried · last model"},
		{"no failure", func(j *fixture) {
			j.user(j.at(0), "hi")
			j.call(j.at(10), j.at(500), "Hello.", "", false)
		}, "2 messages · 1 model call · none failed · last model"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := newFixture(fmt.Sprintf("5555555%d-5555-4555-8555-555555555555", i))
			c.build(j)
			name := j.write(t, e.sessions)
			_, page := e.get(t, "/sessions/"+name)
			m := lede.FindStringSubmatch(page)
			if m == nil || !strings.Contains(m[1], c.want) {
				t.Fatalf("header %q, want it to hold %q", m, c.want)
			}
			if bars := strings.Count(page, `<rect class="call failed"`); bars != strings.Count(c.want, "failed")-strings.Count(c.want, "none failed") {
				t.Errorf("%d red bars for the header %q", bars, c.want)
			}
		})
	}
}
