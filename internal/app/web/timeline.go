package web

import (
	"fmt"
	"slices"
	"sort"
	"time"
	"unicode/utf8"
)

// The timeline is an SVG drawn on the server from a session's entries:
// model calls as bars from the request to the written message (failed ones
// red), tool runs in a lane below, the waits before retries as labelled
// gaps, compactions as marks. Stretches where nothing ran for longer than
// idleBreak (the user reading or away) are cut to a fixed width with the
// idle time written in, so a session spread over a day still shows where
// its working time went.
//
// What happened to each failed call (its wait, its class, how its retry
// chain ended) is what the session file recorded (journal.Decision), or,
// for a file that did not record it, the estimate loading made, drawn as
// such. The labels sit in rows of their own (compaction marks above the
// waits, failure classes with the idle breaks under the calls); one that
// would overlap another in its row is left out (its bar's tooltip and the
// failure list still say it), and none is cut at the picture's edges.

const (
	tlWidth    = 1000.0
	tlLeft     = 60.0 // room for the lane names
	tlRight    = 30.0
	tlMarkY    = 13.0 // baseline of the compaction labels
	tlCallY    = 40.0
	tlToolY    = 76.0
	tlBarH     = 22.0
	tlHeight   = 136.0
	tlFont     = 11.0 // the labels' font size (style.css), 9 for breaks
	tlBreakF   = 9.0
	tlMinBar   = 1.5  // a call of a few milliseconds still shows
	tlBreakW   = 28.0 // width of a cut idle stretch
	idleBreak  = 10 * time.Second
	tlMinLabel = 70.0 // least room between two axis labels
)

type timeline struct {
	Width, Height float64
	CallY, ToolY  float64
	BarH          float64
	// Top and Bottom bound the lanes; AxisY is the baseline of the time
	// labels, FailY of the failed calls' class labels, MarkY of the
	// compaction labels, BreakY of the idle breaks'.
	Top, Bottom, AxisY, FailY, MarkY, BreakY float64
	Bars                                     []tlBar
	Waits                                    []tlWait
	Breaks                                   []tlBreak
	Marks                                    []tlMark
	Ticks                                    []tlTick
	Failures                                 []tlFailure // the failed calls, for the list under the picture
	Estimated                                bool        // some wait is an estimate
}

type tlBar struct {
	X, Y, W float64
	Class   string // call, call failed, call aborted, tool, tool failed
	Title   string
	Anchor  string // the transcript entry's id
}

type tlWait struct {
	X, W  float64
	Label string
	Title string
	// LabelX and Anchor place the label; Label is "" when it did not fit.
	LabelX float64
	Anchor string
	CSS    string // wait, or wait estimated
}

type tlBreak struct {
	X      float64
	Label  string
	LabelX float64
	Anchor string
}

type tlMark struct {
	X      float64
	Label  string
	LabelX float64
	Anchor string // text-anchor of the label: start, or end near the right edge
}

type tlTick struct {
	X      float64
	Label  string
	Anchor string // text-anchor: start, middle, or end for the last
}

type tlFailure struct {
	X                          float64 // where its bar starts
	Anchor, Time, Class, Error string
	Outcome                    string // what became of it: retried, compacted, cancelled…
	Estimated                  bool
	// Label is its class under the bar, "" when it did not fit there.
	Label  string
	LabelX float64
	item   int // its bar's index in the layout
}

// span is an interval of the session's time.
type span struct{ from, to time.Time }

// drawTimeline lays out the entries of v, and corrects the times their
// transcript shows for the calls whose entries mislead (see setCall).
//
// Where a model call starts and ends comes from two times a session file
// holds: a message's own timestamp (the request going out, or the failure
// for a call that failed before it could stream) and its entry's (written
// when the message is complete). A retried failure is written only once
// its wait is over, when it is known to have been retried, so its entry
// time is the end of the wait: the wait began when the call failed, which
// is the message's time for a failure before any output (whose call began
// when the entry before it ended), and otherwise the entry time less the
// recorded (or estimated) delay.
func drawTimeline(v *sessionView) *timeline {
	tl := &timeline{Width: tlWidth, Height: tlHeight, CallY: tlCallY, ToolY: tlToolY, BarH: tlBarH,
		Top: tlCallY - 18, Bottom: tlToolY + tlBarH, AxisY: tlToolY + tlBarH + 18, FailY: tlCallY + tlBarH + 11,
		MarkY: tlMarkY, BreakY: tlToolY - 6}
	type item struct {
		span
		bar  *tlBar
		wait *entryView // the failed call whose retry waited
	}
	var items []item
	var prevEnd time.Time     // when the entry before ended
	var lastCallEnd time.Time // where a tool run starts
	var compactions []time.Time
	var compactLabels []string
	for i := range v.Entries {
		e := &v.Entries[i]
		before := prevEnd
		if !e.End.IsZero() {
			prevEnd = e.End
		}
		switch e.Kind {
		case kindAssistant:
			start, end := e.Start, e.End
			if start.IsZero() || start.After(end) {
				start = end
			}
			if e.Failed() && len(e.Blocks) == 0 && !before.IsZero() && before.Before(start) {
				// Failed before any output, so stamped when it failed: it
				// began when the entry before it ended.
				start = before
			}
			callEnd := end
			switch {
			case e.retriedCall():
				// Written once its wait was over.
				callEnd = end.Add(-time.Duration(e.DelayMs) * time.Millisecond)
				if e.Start.After(callEnd) {
					callEnd = e.Start
				}
			case e.Retried && len(e.Blocks) == 0:
				// Handed to compaction (or refused) and written after it:
				// a failure before any output carries the time it failed.
				callEnd = e.Start
			}
			if callEnd.Before(start) {
				callEnd = start
			}
			if callEnd.After(end) {
				callEnd = end
			}
			if e.retriedCall() && callEnd.Before(end) {
				items = append(items, item{span: span{callEnd, end}, wait: e})
			}
			e.setCall(start, callEnd)
			took := dur(callEnd.Sub(start))
			class, title := "call", fmt.Sprintf("%s · %s", e.Model, took)
			switch {
			case e.Failed():
				class = "call failed"
				title = fmt.Sprintf("%s failed after %s: %s: %s", e.Model, took, e.ErrClass, e.Error)
				if e.Outcome != "" {
					title += " (" + e.Outcome + ")"
				}
				tl.Failures = append(tl.Failures, tlFailure{Anchor: e.ID, Time: clock(callEnd), Class: e.ErrClass, Error: e.Error,
					Outcome: e.Outcome, Estimated: e.Estimated, item: len(items)})
			case e.Abort:
				class = "call aborted"
				title = fmt.Sprintf("%s aborted after %s", e.Model, took)
			case e.ChainEnd == chainResumed:
				// One bar: the stream dropped and went on (retry.streaming
				// "resume"); the gap is inside it, said in its tooltip.
				class = "call resumed"
				title = fmt.Sprintf("%s · %s · the stream dropped and was %s after a %s wait", e.Model, took, e.Reason, dur(time.Duration(e.DelayMs)*time.Millisecond))
			}
			items = append(items, item{span: span{start, callEnd}, bar: &tlBar{Y: tlCallY, Class: class, Title: title, Anchor: e.ID}})
			lastCallEnd = end
		case kindToolResult:
			start := lastCallEnd
			if start.IsZero() || start.After(e.End) {
				start = e.End
			}
			class := "tool"
			if e.IsError {
				class = "tool failed"
			}
			items = append(items, item{span: span{start, e.End}, bar: &tlBar{Y: tlToolY, Class: class,
				Title: fmt.Sprintf("%s · %s", e.ToolName, dur(e.End.Sub(start))), Anchor: e.ID}})
			lastCallEnd = e.End // parallel tool calls run one after another
		case kindCompaction:
			compactions = append(compactions, e.End)
			compactLabels = append(compactLabels, fmt.Sprintf("compaction (%d tokens before)", e.TokensBefore))
		}
	}
	for _, c := range compactions {
		items = append(items, item{span: span{c, c}})
	}
	if len(items) == 0 {
		return tl
	}
	spans := make([]span, 0, len(items))
	var long []span // the waits drawn cut (longwait.go)
	for _, it := range items {
		spans = append(spans, scaleSpans(it.span, it.wait != nil)...)
		if compressed(it.span, it.wait != nil) {
			long = append(long, it.span)
		}
	}
	sc := newScale(spans)
	tl.Breaks = notWaits(sc, long)
	var under labelRow // the failures' classes and the breaks' idle times
	for i := range tl.Breaks {
		b := &tl.Breaks[i]
		b.LabelX, b.Anchor, _ = under.place(b.X+tlBreakW/2, "middle", b.Label, tlBreakF)
	}
	for i := range tl.Failures {
		f := &tl.Failures[i]
		f.X = sc.x(items[f.item].from)
		var ok bool
		if f.LabelX, _, ok = under.place(f.X, "start", f.Class, tlFont); ok {
			f.Label = f.Class
		}
	}
	var waits labelRow
	for _, it := range items {
		x0, x1 := sc.x(it.from), sc.x(it.to)
		switch {
		case it.wait != nil:
			w := tlWait{X: x0, W: x1 - x0, CSS: "wait", Title: "wait " + dur(it.to.Sub(it.from)) + " before retry " + fmt.Sprint(it.wait.Attempt)}
			if compressed(it.span, true) {
				w.Title += " (drawn compressed)"
			}
			if it.wait.Estimated {
				tl.Estimated = true
				w.CSS += " estimated"
				w.Title += " (estimated: the session file does not record it)"
			}
			if x, anchor, ok := waits.place(x0+w.W/2, "middle", "wait "+dur(it.to.Sub(it.from)), tlFont); ok {
				w.Label, w.LabelX, w.Anchor = "wait "+dur(it.to.Sub(it.from)), x, anchor
			}
			tl.Waits = append(tl.Waits, w)
		case it.bar != nil:
			b := *it.bar
			b.X, b.W = x0, max(x1-x0, tlMinBar)
			tl.Bars = append(tl.Bars, b)
		}
	}
	var marks labelRow
	for i, c := range compactions {
		m := tlMark{X: sc.x(c), Anchor: "start"}
		want, wantX := "start", m.X+3
		if m.X > tlWidth/2 {
			want, wantX = "end", m.X-3
		}
		var ok bool
		if m.LabelX, m.Anchor, ok = marks.place(wantX, want, compactLabels[i], tlFont); ok {
			m.Label = compactLabels[i]
		}
		tl.Marks = append(tl.Marks, m)
	}
	tl.Ticks = sc.ticks()
	return tl
}

// labelRow places the labels of one row of the picture, left to right as
// they come: each inside the picture (moved in from an edge rather than
// cut), and refused where it would overlap one placed before.
type labelRow struct{ taken [][2]float64 }

// labelGap is the least room between two labels of a row.
const labelGap = 4.0

// place returns where a label of text at font size font goes when it
// would be anchored at x: its x and text-anchor, or ok false when the row
// has no room there.
func (r *labelRow) place(x float64, anchor, text string, font float64) (lx float64, anchorOut string, ok bool) {
	// A generous width for the console's sans-serif: wider than any
	// lowercase-and-digits text it draws, so "fits" means fits.
	w := float64(utf8.RuneCountInString(text)) * font * 0.62
	left := x
	switch anchor {
	case "middle":
		left = x - w/2
	case "end":
		left = x - w
	}
	left = min(max(left, tlLeft), tlWidth-2-w)
	for _, t := range r.taken {
		if left < t[1]+labelGap && left+w+labelGap > t[0] {
			return 0, "", false
		}
	}
	r.taken = append(r.taken, [2]float64{left, left + w})
	return left, "start", true
}

// scale maps times to x: the busy stretches side by side, each idle
// stretch longer than idleBreak replaced by a break of fixed width.
type scale struct {
	segs   []segment
	perMs  float64
	breaks []tlBreak
}

type segment struct {
	span
	x float64 // where it starts
}

func newScale(spans []span) *scale {
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var segs []segment
	for _, s := range spans {
		if n := len(segs); n > 0 && s.from.Sub(segs[n-1].to) <= idleBreak {
			if s.to.After(segs[n-1].to) {
				segs[n-1].to = s.to
			}
			continue
		}
		segs = append(segs, segment{span: s})
	}
	var busy time.Duration
	for _, s := range segs {
		busy += s.to.Sub(s.from)
	}
	room := tlWidth - tlLeft - tlRight - tlBreakW*float64(len(segs)-1)
	sc := &scale{segs: segs, perMs: room / max(float64(busy.Milliseconds()), 1)}
	x := tlLeft
	for i := range segs {
		if i > 0 {
			sc.breaks = append(sc.breaks, tlBreak{X: x, Label: "idle " + dur(segs[i].from.Sub(segs[i-1].to))})
			x += tlBreakW
		}
		segs[i].x = x
		x += float64(segs[i].to.Sub(segs[i].from).Milliseconds()) * sc.perMs
	}
	return sc
}

// x is the position of t, which lies in some segment.
func (sc *scale) x(t time.Time) float64 {
	i := sort.Search(len(sc.segs), func(i int) bool { return sc.segs[i].to.After(t) || sc.segs[i].to.Equal(t) })
	if i == len(sc.segs) {
		i--
	}
	s := sc.segs[i]
	if t.Before(s.from) {
		t = s.from
	}
	return s.x + float64(t.Sub(s.from).Milliseconds())*sc.perMs
}

// ticks labels the start of each busy stretch with its clock time, and
// the end of the last, where there is room.
func (sc *scale) ticks() []tlTick {
	var out []tlTick
	add := func(x float64, t time.Time) {
		if n := len(out); n > 0 && x-out[n-1].X < tlMinLabel {
			return
		}
		out = append(out, tlTick{X: x, Label: clock(t), Anchor: "middle"})
	}
	for _, s := range sc.segs {
		add(s.x, s.from)
	}
	out[0].Anchor = "start"
	last := sc.segs[len(sc.segs)-1]
	if x := sc.x(last.to); x-out[len(out)-1].X >= tlMinLabel {
		out = append(out, tlTick{X: x, Label: clock(last.to), Anchor: "end"})
	}
	return out
}

func clock(t time.Time) string { return t.Local().Format("15:04:05") }

// dur writes a duration for a label: 850ms, 2.0s, 1m05s, 3h12m.
func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
