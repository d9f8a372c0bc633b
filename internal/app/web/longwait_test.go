package web

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLongWaitCompressed: a two-hour wait for a usage limit's reset is
// drawn cut to the width of a break, labelled with its real length, and
// the calls around it keep the picture; no "idle" break stands for it.
func TestLongWaitCompressed(t *testing.T) {
	const hours2 = 2 * 3600 * 1000
	j := newFixture("99999999-9999-4999-8999-999999999999")
	j.user(j.at(0), "Refactor it overnight")
	j.call(j.at(100), j.at(1100+hours2), "", "429 usage limit reached", true)
	j.decided(`{"attempt":1,"delayMs":7200000,"class":"usage_limit","reason":"usage limit: waiting for the reset"}`)
	j.call(j.at(1200+hours2), j.at(9200+hours2), "Refactored.", "", false)
	e := newEnv(t)
	name := j.write(t, e.sessions)
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatal(code)
	}
	waits := regexp.MustCompile(`<g class="wait"><rect class="wait" x="[^"]*" y="[^"]*" width="([^"]*)"[^>]*><title>([^<]*)</title></rect><text class="wait-label"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(page, -1)
	if len(waits) != 1 {
		t.Fatalf("%d waits drawn, want 1", len(waits))
	}
	if w, _ := strconv.ParseFloat(waits[0][1], 64); w > tlBreakW+1 || waits[0][3] != "wait 2h00m" || !strings.Contains(waits[0][2], "compressed") {
		t.Errorf("wait drawn %s wide, labelled %q, titled %q; want a cut one labelled with its 2 hours", waits[0][1], waits[0][3], waits[0][2])
	}
	if strings.Contains(page, "idle 2h") {
		t.Error("an idle break stands for the wait")
	}
	// The answer after the wait (8 s) gets most of the picture.
	bars := regexp.MustCompile(`<rect class="call" x="[^"]*" y="[^"]*" width="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(bars) == 0 {
		t.Fatal("no call bar")
	}
	if w, _ := strconv.ParseFloat(bars[len(bars)-1][1], 64); w < 500 {
		t.Errorf("the answer after the wait is %v wide, want most of the picture", w)
	}
}
