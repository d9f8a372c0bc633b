package web

import (
	"strings"
	"testing"
)

// TestResumedCallDrawn: an answer whose stream dropped and was resumed is
// one call on the timeline, marked resumed, its tooltip saying how and
// after what wait; it is no failure.
func TestResumedCallDrawn(t *testing.T) {
	e := newEnv(t)
	j := newFixture("99999999-9999-4999-8999-999999999999")
	j.user(j.at(0), "Write a long answer")
	j.call(j.at(100), j.at(4100), "A long answer, streamed once.", "", false)
	j.decided(`{"attempt":1,"delayMs":2000,"class":"transient","reason":"resumed from cursor 31","end":"resumed"}`)
	name := j.write(t, e.sessions)
	code, page := e.get(t, "/sessions/"+name)
	if code != 200 {
		t.Fatal(code)
	}
	if !strings.Contains(page, `class="call resumed"`) || !strings.Contains(page, "the stream dropped and was resumed from cursor 31 after a 2.0s wait") {
		t.Errorf("no resumed call in the timeline:\n%s", page)
	}
	if strings.Contains(page, `class="call failed"`) {
		t.Errorf("the resumed call is drawn as a failure")
	}
}
