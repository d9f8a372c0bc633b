package web

import (
	"regexp"
	"strings"
	"testing"
)

// decided adds what rally decided (a journal decision, as JSON) to the
// entry written last.
func (j *fixture) decided(d string) {
	last := j.lines[len(j.lines)-1]
	j.lines[len(j.lines)-1] = strings.TrimSuffix(last, "}") + `,"decision":` + d + `}`
}

// overflowSession is the session of issue 22 defect 12: an overflow that
// compaction handled, then a retry chain the user cancelled in its wait,
// then one that ran out of retries, each recorded as rally decided it.
func overflowSession(id string) *fixture {
	j := newFixture(id)
	j.user(j.at(0), "Summarise the repository")
	j.call(j.at(400), j.at(2600), "", "400 prompt is too long: 250000 tokens > 200000 maximum", true)
	j.decided(`{"class":"context_overflow","end":"compaction"}`)
	j.compaction(j.at(2500), "The user wants a summary.")
	j.call(j.at(2600), j.at(3600), "Here it is.", "", false)
	j.user(j.at(5000), "Again")
	j.call(j.at(5300), j.at(5300), "", "529 overloaded_error: Overloaded", false)
	j.decided(`{"attempt":1,"delayMs":2000,"class":"transient","reason":"Retry cancelled","end":"cancelled"}`)
	j.user(j.at(6000), "Once more")
	j.call(j.at(6100), j.at(6200), "", "503 overloaded", true)
	j.decided(`{"attempt":1,"delayMs":100,"class":"transient"}`)
	j.call(j.at(6300), j.at(6300), "", "503 overloaded", false)
	j.decided(`{"attempt":1,"class":"transient","reason":"gave up after 1 retries","end":"exhausted"}`)
	return j
}

// TestDecisionsLabelled: each failed call is labelled with what rally
// decided, not what today's classifier makes of its stored text.
func TestDecisionsLabelled(t *testing.T) {
	e := newEnv(t)
	name := overflowSession("88888888-8888-4888-8888-888888888888").write(t, e.sessions)
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatal(code)
	}
	lede := regexp.MustCompile(`<p class="lede">(.*?)</p>`).FindStringSubmatch(page)
	want := "5 model calls · 1 failed and retried · 1 overflowed, handed to compaction · 1 failed, retry cancelled · 1 failed, not retried"
	if lede == nil || !strings.Contains(lede[1], want) {
		t.Errorf("header %q, want it to hold %q", lede, want)
	}
	items := regexp.MustCompile(`(?s)<li><a href="#e-[^"]*">[^<]*</a> (.*?)</li>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range items {
		got = append(got, regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], ""))
	}
	wantItems := []string{
		"context_overflow: 400 prompt is too long: 250000 tokens &gt; 200000 maximum (handed to compaction)",
		"transient: 529 overloaded_error: Overloaded (retry cancelled)",
		"transient: 503 overloaded (retry 1 after 100ms)",
		"transient: 503 overloaded (gave up after 1 retries)",
	}
	if strings.Join(got, "\n") != strings.Join(wantItems, "\n") {
		t.Errorf("failure list\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantItems, "\n"))
	}
	// Only the real retry waited; the overflow went to compaction.
	waits := regexp.MustCompile(`<text class="wait-label"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(page, -1)
	if len(waits) != 1 || waits[0][1] != "wait 100ms" {
		t.Errorf("wait labels %q, want one \"wait 100ms\"", waits)
	}
	for _, bad := range []string{"transient · failed and retried", "estimated"} {
		if strings.Contains(page, bad) {
			t.Errorf("page says %q", bad)
		}
	}
	for _, badge := range []string{"overflow, compacted", "failed, retry cancelled", "failed, retried", "failed, retries exhausted"} {
		if !strings.Contains(page, `<span class="badge">`+badge+`</span>`) {
			t.Errorf("no %q badge", badge)
		}
	}
}

// TestEstimatedMarked: a file without decisions still renders, its
// guesses marked as such.
func TestEstimatedMarked(t *testing.T) {
	e := newEnv(t)
	name := retrySession("99999999-8888-4888-8888-888888888888").write(t, e.sessions)
	_, page := e.get(t, "/sessions/"+name)
	for _, s := range []string{`<rect class="wait estimated"`, "(estimated: the session file does not record it)", "retry 1 after 2.0s; estimated: the file does not record it"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}
