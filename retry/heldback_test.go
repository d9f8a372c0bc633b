package retry

import (
	"testing"
	"time"
)

// heldbackScore is how the classifier did on a set of real errors, in the
// terms of issue 23.
type heldbackScore struct {
	n, agree int
	// retriedWrongly counts fatal or overflow errors classified retryable:
	// each one wastes a retry chain on a request that cannot succeed.
	retriedWrongly int
	// gaveUpWrongly counts retryable errors classified fatal or overflow.
	gaveUpWrongly int
	// waits counts entries that state a wait; waitsRead those whose hint is
	// within 10% of it.
	waits, waitsRead int
	// misses names the entries that disagreed, for the failure message.
	misses []string
}

func scoreCorpus(entries []corpusEntry) heldbackScore {
	var s heldbackScore
	for _, e := range entries {
		f := e.failure()
		s.n++
		v := Classify(f)
		switch {
		case v.Class == e.Want:
			s.agree++
		case v.Class.Retryable() && !e.Want.Retryable():
			s.retriedWrongly++
		case !v.Class.Retryable() && e.Want.Retryable():
			s.gaveUpWrongly++
		}
		if v.Class != e.Want {
			s.misses = append(s.misses, e.Name+": got "+v.Class.String()+" ("+v.Reason+"), want "+e.Want.String())
		}
		if e.HintMs != nil && *e.HintMs > 0 {
			s.waits++
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			if e.Now != nil {
				now = *e.Now
			}
			want := time.Duration(*e.HintMs) * time.Millisecond
			if got := Hint(f, now); got >= want-want/10 && got <= want+want/10 {
				s.waitsRead++
			} else {
				s.misses = append(s.misses, e.Name+": wait "+got.String()+", want "+want.String())
			}
		}
	}
	return s
}

// TestHeldback holds the classifier to issue 23's bar on errors it was never
// tuned on. heldback.jsonl is a random third (Python's random.Random(23)
// shuffle of the 161 entries sorted by name) of the errors gathered for the
// issue, frozen before any classifier change; the other two thirds are
// issue23_fresh.jsonl (less two entries whose text the older corpus
// already held), which TestCorpus holds exactly.
//
// Tuning on this file is not allowed. When an entry here fails, do not add
// its wording to a list: find the family it belongs to, gather real errors
// of that family into a tuning file, and fix the rule there. This file only
// measures; changing its entries or its thresholds to make it pass defeats
// it.
func TestHeldback(t *testing.T) {
	s := scoreCorpus(readCorpus(t, heldbackFile))
	t.Logf("held-back: %d/%d agree (%.1f%%), %d retried wrongly, %d given up wrongly, %d/%d stated waits read within 10%%",
		s.agree, s.n, 100*float64(s.agree)/float64(s.n), s.retriedWrongly, s.gaveUpWrongly, s.waitsRead, s.waits)
	if s.n < 50 {
		t.Fatalf("held-back set has %d entries; the issue's third of 150 is at least 50", s.n)
	}
	if 100*s.agree < 95*s.n || s.retriedWrongly > 1 || s.waitsRead < s.waits {
		t.Errorf("below issue 23's bar (95%% agreement, at most 1 retried wrongly, every stated wait within 10%%):")
		for _, m := range s.misses {
			t.Log("  " + m)
		}
	}
}
