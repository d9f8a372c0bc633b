package web

// A wait for a usage limit's reset (retry.waitForReset) lasts minutes to
// hours: drawn to scale it would take the whole picture and squeeze every
// call into a sliver. Such a wait is cut like an idle stretch, to the
// width of a break, and keeps its real length in its label ("wait
// 2h13m"), in place of the break's "idle" one.

// compressed reports a wait long enough to be drawn cut.
func compressed(s span, wait bool) bool { return wait && s.to.Sub(s.from) > idleBreak }

// scaleSpans is what an item gives the scale: a long wait only its two
// ends, so the scale cuts what lies between.
func scaleSpans(s span, wait bool) []span {
	if compressed(s, wait) {
		return []span{{s.from, s.from}, {s.to, s.to}}
	}
	return []span{s}
}

// notWaits is the scale's breaks but those a long wait fills: the wait
// drawn there says what the time was.
func notWaits(sc *scale, long []span) []tlBreak {
	out := sc.breaks[:0:0]
	for _, b := range sc.breaks {
		inWait := false
		for _, w := range long {
			if b.X >= sc.x(w.from)-0.01 && b.X+tlBreakW <= sc.x(w.to)+0.01 {
				inWait = true
				break
			}
		}
		if !inWait {
			out = append(out, b)
		}
	}
	return out
}
