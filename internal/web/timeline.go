package web

import (
	"fmt"
	"html/template"
	"slices"
	"sort"
	"time"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/settings"
)

// The timeline is an SVG drawn on the server from a session's entries:
// model calls as bars from the request to the written message (failed ones
// red), tool runs in a lane below, the waits before retries as labelled
// gaps, compactions as marks. Stretches where nothing ran for longer than
// idleBreak (the user reading or away) are cut to a fixed width with the
// idle time written in, so a session spread over a day still shows where
// its working time went.

const (
	tlWidth    = 1000.0
	tlLeft     = 60.0 // room for the lane names
	tlRight    = 30.0
	tlCallY    = 34.0
	tlToolY    = 70.0
	tlBarH     = 22.0
	tlHeight   = 130.0
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
	// labels, FailY of the failed calls' class labels.
	Top, Bottom, AxisY, FailY float64
	Bars                      []tlBar
	Waits                     []tlWait
	Breaks                    []tlBreak
	Marks                     []tlMark
	Ticks                     []tlTick
	Failures                  []tlFailure // the failed calls, for the list under the picture
}

type tlBar struct {
	X, Y, W float64
	// Geom is the rect's x, y, width and height attributes, written here
	// from the numbers alone: a session of 10,000 entries has thousands
	// of bars, and four template calls less for each is a third of the
	// page's rendering.
	Geom   template.HTMLAttr
	Class  string // call, call failed, call aborted, tool, tool failed
	Title  string
	Anchor string // the transcript entry's id
}

type tlWait struct {
	X, W  float64
	Label string
}

type tlBreak struct {
	X     float64
	Label string
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
	Retried                    bool
	item                       int // its bar's index in the layout
}

// span is an interval of the session's time.
type span struct{ from, to time.Time }

// planner says how long rally waits before retry n of the failed call e.
type planner func(e *entryView, n int) time.Duration

// retryPlanner plans with the retry settings st, taking the longest wait
// they allow (jitter at its top). It plans every retry: settings changed
// since the session ran must not make a wait that happened disappear.
func retryPlanner(st *settings.Settings) planner {
	return func(e *entryView, n int) time.Duration {
		pol := st.RetryPolicy(e.Provider)
		pol.Disabled, pol.MaxRetries = false, max(pol.MaxRetries, n)
		pol.Rand = func() float64 { return 1 }
		f := retry.Failure{Provider: e.Provider, Body: e.Error}
		class := retry.Classify(f).Class
		if !class.Retryable() {
			// Retried, so rally saw it as transient: the stored text lost
			// what told it so (an idle timeout's Go error type).
			class = retry.Transient
		}
		return pol.Decide(retry.Attempt{Class: class, N: n, Hint: retry.Hint(f, e.Start)}).Delay
	}
}

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
// delay plan gives.
func drawTimeline(v *sessionView, plan planner) *timeline {
	tl := &timeline{Width: tlWidth, Height: tlHeight, CallY: tlCallY, ToolY: tlToolY, BarH: tlBarH,
		Top: tlCallY - 18, Bottom: tlToolY + tlBarH, AxisY: tlToolY + tlBarH + 18, FailY: tlCallY + tlBarH + 11}
	type item struct {
		span
		bar  *tlBar
		wait bool
	}
	var items []item
	var prevEnd time.Time     // when the entry before ended
	var lastCallEnd time.Time // where a tool run starts
	attempt := 0              // retries so far in the current chain
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
			if e.Retried {
				attempt++
				callEnd = end.Add(-plan(e, attempt))
				if e.Start.After(callEnd) {
					callEnd = e.Start
				}
				if callEnd.Before(start) {
					callEnd = start
				}
				if callEnd.After(end) {
					callEnd = end
				}
				items = append(items, item{span: span{callEnd, end}, wait: true})
			} else {
				attempt = 0
			}
			e.setCall(start, callEnd)
			took := dur(callEnd.Sub(start))
			class, title := "call", fmt.Sprintf("%s · %s", e.Model, took)
			switch {
			case e.Failed():
				class = "call failed"
				title = fmt.Sprintf("%s failed after %s: %s: %s", e.Model, took, e.ErrClass, e.Error)
				tl.Failures = append(tl.Failures, tlFailure{Anchor: e.ID, Time: clock(callEnd), Class: e.ErrClass, Error: e.Error, Retried: e.Retried, item: len(items)})
			case e.Abort:
				class = "call aborted"
				title = fmt.Sprintf("%s aborted after %s", e.Model, took)
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
		case kindUser:
			attempt = 0
		}
	}
	for _, c := range compactions {
		items = append(items, item{span: span{c, c}})
	}
	if len(items) == 0 {
		return tl
	}
	spans := make([]span, len(items))
	for i, it := range items {
		spans[i] = it.span
	}
	sc := newScale(spans)
	for i := range tl.Failures {
		tl.Failures[i].X = sc.x(items[tl.Failures[i].item].from)
	}
	for _, it := range items {
		x0, x1 := sc.x(it.from), sc.x(it.to)
		switch {
		case it.wait:
			tl.Waits = append(tl.Waits, tlWait{X: x0, W: x1 - x0, Label: "wait " + dur(it.to.Sub(it.from))})
		case it.bar != nil:
			b := *it.bar
			b.X, b.W = x0, max(x1-x0, tlMinBar)
			b.Geom = template.HTMLAttr(fmt.Sprintf(`x="%.1f" y="%.1f" width="%.1f" height="%.1f"`, b.X, b.Y, b.W, tlBarH))
			tl.Bars = append(tl.Bars, b)
		}
	}
	for i, c := range compactions {
		m := tlMark{X: sc.x(c), Label: compactLabels[i], Anchor: "start"}
		m.LabelX = m.X + 3
		if m.X > tlWidth/2 {
			m.Anchor, m.LabelX = "end", m.X-3
		}
		tl.Marks = append(tl.Marks, m)
	}
	tl.Breaks = sc.breaks
	tl.Ticks = sc.ticks()
	return tl
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
