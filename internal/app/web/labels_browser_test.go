package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// crowdedSession packs labels together: failures 150 ms apart, a
// compaction just after a wait (once drawn as "wait 0ms" over
// "compaction …"), and an overflow as the very last call, whose labels
// used to run off the right edge.
func crowdedSession(id string) *fixture {
	j := newFixture(id)
	j.user(j.at(0), "go")
	ms := 100
	for i := 1; i <= 6; i++ {
		j.call(j.at(ms), j.at(ms+100), "", "503 overloaded", true)
		j.decided(fmt.Sprintf(`{"attempt":%d,"delayMs":50,"class":"transient"}`, i))
		ms += 150
	}
	j.call(j.at(ms), j.at(ms+300), "ok", "", false)
	j.decided(`{"attempt":6,"end":"succeeded"}`)
	ms += 400
	j.user(j.at(ms), "more")
	j.call(j.at(ms+50), j.at(ms+60), "", "503 overloaded", true) // estimated: written by an older rally
	j.compaction(j.at(ms+70), "Compacted right after the wait.")
	j.call(j.at(ms+80), j.at(ms+900), "fine", "", false)
	j.call(j.at(ms+950), j.at(ms+1000), "", "400 prompt is too long: 250000 tokens > 200000 maximum", true)
	j.decided(`{"class":"context_overflow","end":"compaction"}`)
	j.compaction(j.at(ms+1000), "The very last thing in the session, at the right edge.")
	return j
}

// TestBrowserTimelineLabels measures every label of the timeline as
// Chromium lays it out: no two overlap, and none leaves the picture.
func TestBrowserTimelineLabels(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	for i, j := range []*fixture{crowdedSession("12121212-1212-4121-8121-121212121212"), overflowSession("13131313-1313-4131-8131-131313131313"), retrySession("14141414-1414-4141-8141-141414141414")} {
		name := j.write(t, e.sessions)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			within(t, ctx, "open", chromedp.Navigate(e.ts.URL+"/sessions/"+name+"?token="+e.srv.Token()))
			type box struct {
				Text               string
				X, Y, W, H, VW, VH float64
			}
			boxes := within(t, ctx, "labels", chromedp.Evaluate[[]box](`(() => {
				const svg = document.getElementById('timeline'), vb = svg.viewBox.baseVal;
				return [...svg.querySelectorAll('text')].map(e => { const b = e.getBBox();
					return {Text: e.textContent, X: b.x, Y: b.y, W: b.width, H: b.height, VW: vb.width, VH: vb.height}; });
			})()`))
			if len(boxes) < 4 {
				t.Fatalf("%d labels", len(boxes))
			}
			for a, p := range boxes {
				if p.X < 0 || p.Y < 0 || p.X+p.W > p.VW || p.Y+p.H > p.VH {
					t.Errorf("%q is cut at the edge: x %.1f–%.1f y %.1f–%.1f of %.0f×%.0f", p.Text, p.X, p.X+p.W, p.Y, p.Y+p.H, p.VW, p.VH)
				}
				for _, q := range boxes[a+1:] {
					if p.X < q.X+q.W && q.X < p.X+p.W && p.Y < q.Y+q.H && q.Y < p.Y+p.H {
						t.Errorf("%q overlaps %q", p.Text, q.Text)
					}
				}
			}
			screenshot(t, ctx, fmt.Sprintf("timeline-labels-%d.png", i))
		})
	}
}
