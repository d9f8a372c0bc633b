package auth

import (
	"context"
	"testing"
	"time"

	"github.com/rally-agent/rally/llm"
)

// TestLearnedReset: a reset a provider stated for a credential is learned
// by a later rotation (another rally process) from the shared marks, kept
// when a limit that states none re-marks the credential past it, and
// forgotten once it has passed. A DefaultBlock guess, a reset past its
// mark's end and a client the rotation did not hand out teach nothing.
func TestLearnedReset(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.creds["solo"] = []Credential{{ID: "s", Key: keyA}}
	r.creds["guess"] = []Credential{{ID: "g", Key: keyB}}
	t0 := r.clk.t
	reset := t0.Add(2 * time.Hour)

	first := r.rotation()
	from := must2(first.Start(ctx, "solo", "m"))
	if _, ok := first.Switch(ctx, from, report(usageLimit("limit"), 2*time.Hour)); ok {
		t.Fatal("switched away from the only credential")
	}
	// A limit with no stated reset on another credential: only a guess.
	guess := must2(first.Start(ctx, "guess", "m"))
	first.Switch(ctx, guess, report(usageLimit("limit"), 0))

	steps := []struct {
		name    string
		advance time.Duration
		limit   bool // a limit that states no reset re-marks the credential first
		want    time.Time
	}{
		{"stated reset learned", 30 * time.Minute, false, reset},
		// now + DefaultBlock ends before the reset: the old mark stands.
		{"kept by a mark that ends before it", 0, true, reset},
		// now + DefaultBlock ends after the reset: the new mark carries it.
		{"carried by a mark that ends after it", time.Hour, true, reset},
		{"forgotten once past", time.Hour + time.Second, false, time.Time{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r.clk.advance(st.advance)
			later := r.rotation() // a new process, sharing the marks
			to := must2(later.Start(ctx, "solo", "m"))
			if st.limit {
				later.Switch(ctx, to, report(usageLimit("limit"), 0))
			}
			fresh := r.rotation()
			if got := fresh.LearnedReset(ctx, must2(fresh.Start(ctx, "solo", "m"))); !got.Equal(st.want) {
				t.Errorf("learned %v, want %v", got, st.want)
			}
			if got := later.LearnedReset(ctx, to); !got.Equal(st.want) {
				t.Errorf("the rotation that re-marked it learned %v, want %v", got, st.want)
			}
		})
	}

	t.Run("nothing learned", func(t *testing.T) {
		rot := r.rotation()
		if got := rot.LearnedReset(ctx, must2(rot.Start(ctx, "guess", "m"))); !got.IsZero() {
			t.Errorf("a DefaultBlock guess taught %v", got)
		}
		if got := rot.LearnedReset(ctx, llm.Target{Ref: "elsewhere"}); !got.IsZero() {
			t.Errorf("a foreign client taught %v", got)
		}
		now := r.clk.t
		must(t, r.marks.Block(ctx, Mark{Provider: "solo", ID: "s", Key: Fingerprint(keyA), Until: now.Add(time.Hour), Reset: now.Add(30 * time.Hour)}))
		if got := rot.LearnedReset(ctx, must2(rot.Start(ctx, "solo", "m"))); !got.IsZero() {
			t.Errorf("a reset after its mark's end taught %v", got)
		}
	})
}
