package web

import "github.com/rally-agent/rally/internal/htmlw"

// writeTimeline draws t as an SVG, with the legend and the list of
// failed calls under it.
func writeTimeline(w *htmlw.Writer, t *timeline) {
	// at writes ` x="X" y="Y"`, the position of a label or a shape.
	at := func(x, y float64) {
		w.Raw(` x="`)
		w.F1(x)
		w.Raw(`" y="`)
		w.F1(y)
		w.Raw(`"`)
	}
	// box writes ` x y width height`, a rect's geometry.
	box := func(x, y, width, height float64) {
		at(x, y)
		w.Raw(` width="`)
		w.F1(width)
		w.Raw(`" height="`)
		w.F1(height)
		w.Raw(`"`)
	}
	// label writes a <text> at x, y anchored by anchor.
	label := func(class string, x, y float64, anchor, text string) {
		w.Raw("<text" + class)
		at(x, y)
		w.Raw(` text-anchor="`)
		w.Attr(anchor)
		w.Raw(`">`)
		w.Text(text)
		w.Raw("</text>")
	}
	title := func(s string) {
		w.Raw("<title>")
		w.Text(s)
		w.Raw("</title>")
	}
	w.Raw("\n<h2>Timeline</h2>\n<svg class=\"timeline\" id=\"timeline\" viewBox=\"0 0 ")
	w.F1(t.Width)
	w.Raw(" ")
	w.F1(t.Height)
	w.Raw("\" role=\"img\" aria-label=\"model calls, tools, waits and retries over time\" xmlns=\"http://www.w3.org/2000/svg\">\n" +
		"<text class=\"lane\" x=\"4\" y=\"")
	w.F1(t.CallY + 15)
	w.Raw("\">model</text>\n<text class=\"lane\" x=\"4\" y=\"")
	w.F1(t.ToolY + 15)
	w.Raw("\">tools</text>\n")
	for _, b := range t.Breaks {
		w.Raw(`<g class="break"><rect`)
		box(b.X, t.Top, tlBreakW, t.Bottom-t.Top)
		w.Raw(`>`)
		title(b.Label)
		w.Raw("</rect>")
		if b.Anchor != "" {
			label("", b.LabelX, t.BreakY, b.Anchor, b.Label)
		}
		w.Raw("</g>\n")
	}
	for _, wt := range t.Waits {
		w.Raw(`<g class="wait"><rect class="`)
		w.Attr(wt.CSS)
		w.Raw(`"`)
		box(wt.X, t.CallY, wt.W, t.BarH)
		w.Raw(`>`)
		title(wt.Title)
		w.Raw("</rect>")
		if wt.Label != "" {
			label(` class="wait-label"`, wt.LabelX, t.CallY-5, wt.Anchor, wt.Label)
		}
		w.Raw("</g>\n")
	}
	for _, b := range t.Bars {
		w.Raw(`<a href="#e-`)
		w.URLQuery(b.Anchor)
		w.Raw(`"><rect class="`)
		w.Attr(b.Class)
		w.Raw(`"`)
		box(b.X, b.Y, b.W, tlBarH)
		w.Raw(`>`)
		title(b.Title)
		w.Raw("</rect></a>\n")
	}
	for _, f := range t.Failures {
		if f.Label != "" {
			w.Raw(`<text class="fail-label"`)
			at(f.LabelX, t.FailY)
			w.Raw(">")
			w.Text(f.Label)
			w.Raw("</text>\n")
		}
	}
	for _, m := range t.Marks {
		w.Raw(`<g class="compaction"><line x1="`)
		w.F1(m.X)
		w.Raw(`" x2="`)
		w.F1(m.X)
		w.Raw(`" y1="`)
		w.F1(t.Top)
		w.Raw(`" y2="`)
		w.F1(t.Bottom)
		w.Raw(`"/>`)
		if m.Label != "" {
			label("", m.LabelX, t.MarkY, m.Anchor, m.Label)
		}
		w.Raw("</g>\n")
	}
	for _, k := range t.Ticks {
		label(` class="tick"`, k.X, t.AxisY, k.Anchor, k.Label)
		w.Raw("\n")
	}
	w.Raw("</svg>\n<p class=\"legend\"><span class=\"k call\"></span> model call <span class=\"k failed\"></span> failed call " +
		"<span class=\"k wait\"></span> wait before a retry <span class=\"k tool\"></span> tool " +
		"<span class=\"k compaction\"></span> compaction <span class=\"k break\"></span> idle (cut)</p>\n")
	if t.Estimated {
		w.Raw("<p class=\"legend\">A dotted grey wait is estimated: this session file does not record what rally decided " +
			"(older rally, or pi), so it is the longest wait the default retry settings allow.</p>")
	}
	w.Raw("\n")
	if len(t.Failures) > 0 {
		w.Raw(`<h3>Failed calls</h3><ul class="failures" id="failures">`)
		for _, f := range t.Failures {
			w.Raw("\n<li><a href=\"#e-")
			w.URLQuery(f.Anchor)
			w.Raw(`">`)
			w.Text(f.Time)
			w.Raw(`</a> <b class="class">`)
			w.Text(f.Class)
			w.Raw(`</b>: <span class="err">`)
			w.Text(f.Error)
			w.Raw("</span>")
			with(w, f.Outcome, ` <i class="outcome">(`, ")</i>")
			w.Raw("</li>")
		}
		w.Raw("</ul>")
	}
	w.Raw("\n")
}
