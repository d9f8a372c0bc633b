package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// A huge session's page is bounded (issue 24 defect 10): the transcript
// is paged by entries and bytes, a block longer than blockBytes is cut,
// and every entry is on exactly one page.
func TestHugeSessionPagesAreBounded(t *testing.T) {
	e := newEnv(t)
	j := newFixture("99999999-9999-4999-8999-999999999999")
	text := strings.Repeat("the tests pass; ", 128) // 2 KB
	for i := range 1500 {
		j.user(j.at(i*1000), text)
		j.call(j.at(i*1000+10), j.at(i*1000+500), text, "", false)
	}
	huge := strings.Repeat("x", 3<<20) + "END-OF-HUGE-OUTPUT"
	j.tool(j.at(1600000), j.at(1600100), j.at(1600200), "bash", `{"command":"cat big.log"}`, huge)
	name := j.write(t, e.sessions)
	entries := len(j.lines) - 1
	// The page shows no more than this: the transcript's bound, one cut
	// block, and the timeline and the page around them.
	const bound = transcriptBytes + blockBytes + 1<<20

	article := regexp.MustCompile(`<article id="e-([0-9a-f]+)"`)
	seen := map[string]int{}
	next := "/sessions/" + name
	pages := 0
	for next != "" {
		code, body := e.get(t, next)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", next, code)
		}
		pages++
		if len(body) > bound {
			t.Fatalf("page %d is %d bytes, over the bound of %d (the file is %d MB)", pages, len(body), bound, (len(huge)+entries*2048)>>20)
		}
		for _, m := range article.FindAllStringSubmatch(body, -1) {
			seen[m[1]]++
		}
		if strings.Contains(body, "END-OF-HUGE-OUTPUT") {
			t.Fatal("the 3 MB tool output is shown whole")
		}
		next = ""
		if m := regexp.MustCompile(`<a href="[^"]*(/sessions/[^"?]+\?page=\d+)#transcript" id="next">`).FindStringSubmatch(body); m != nil {
			next = m[1]
		}
		if pages > 100 {
			t.Fatal("no end to the pages")
		}
	}
	if pages < 3 {
		t.Errorf("%d pages for %d entries of about 2 KB each, want the transcript paged", pages, entries)
	}
	if len(seen) != entries {
		t.Errorf("%d entries over all pages, want %d", len(seen), entries)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("entry %s on %d pages", id, n)
		}
	}
	_, last := e.get(t, "/sessions/"+name+"?page=999")
	if !strings.Contains(last, "more bytes of this block are not shown") {
		t.Error("the last page does not say that the long tool output was cut")
	}
}
