package retry

import (
	"errors"
	"strconv"
	"testing"
)

// TestClassOutOfRange: a class just outside the named ones prints its
// number and does not marshal; the first and last named ones do.
// Bugs caught (surviving mutants): the range checks moved by one, which
// turned Fatal into "Class(0)" or indexed past the names (a panic).
func TestClassOutOfRange(t *testing.T) {
	for _, tt := range []struct {
		c    Class
		name string
		ok   bool
	}{
		{Fatal - 1, "Class(-1)", false},
		{Fatal, "fatal", true},
		{ContextOverflow, "context_overflow", true},
		{ContextOverflow + 1, "Class(4)", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.String(); got != tt.name {
				t.Errorf("String = %q, want %q", got, tt.name)
			}
			b, err := tt.c.MarshalText()
			if (err == nil) != tt.ok || tt.ok && string(b) != tt.name {
				t.Errorf("MarshalText = %q, %v; want ok %v", b, err, tt.ok)
			}
		})
	}
}

// TestOverflowEdges: wordings at the edges of the overflow rules, each the
// one case that tells a rule from a surviving mutant of it.
func TestOverflowEdges(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       Class
	}{
		// A request exactly the per-minute budget fits it: it waits.
		// Bug caught: "requested > limit" taken as "requested >= limit".
		{"request equals the budget", "Rate limit reached for tokens per minute: Limit 6000, Used 5990, Requested 6000. Please try again in 59s.", Transient},
		{"request over the budget", "Rate limit reached for tokens per minute: Limit 6000, Used 0, Requested 6001. Please try again in 59s.", ContextOverflow},
		// The comparison word opens the message. Bug caught: a match at
		// the start of the text read as no match.
		{"comparison first", "exceeds the context size: 9000 tokens, model allows 8192", ContextOverflow},
		// A count over a limit needs a number. Bug caught: hasDigit's
		// range test negated or moved, which took any text for a number.
		{"no number", "prompt exceeds the token limit", Fatal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status := 400
			if tt.want == Transient {
				status = 429
			}
			if v := Classify(Failure{Status: status, Body: tt.body}); v.Class != tt.want {
				t.Errorf("class %v (%s), want %v", v.Class, v.Reason, tt.want)
			}
		})
	}
}

// TestHasDigit: only '0' to '9' are digits, the bytes beside them not.
// Bug caught: either bound of the range moved by one.
func TestHasDigit(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "9": true, "/": false, ":": false, "": false, "no digit": false, "n=5": true} {
		if got := hasDigit(s); got != want {
			t.Errorf("hasDigit(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestFailureOfKeepsTheError: a Describer that leaves Err unset gets the
// error itself, so errors.Is still reaches the cause; one that sets it
// keeps its own. Bug caught (a surviving mutant): the nil test negated.
func TestFailureOfKeepsTheError(t *testing.T) {
	own := errors.New("own")
	unset := &describing{Failure{Status: 500}}
	if got := FailureOf(unset).Err; got != error(unset) {
		t.Errorf("unset: Err = %v, want the error itself", got)
	}
	if got := FailureOf(&describing{Failure{Status: 500, Err: own}}).Err; got != own {
		t.Errorf("set: Err = %v, want its own", got)
	}
}

// TestFatalStatusReason: any 4xx without a better reason is named by its
// status, 400 and 499 included. Bugs caught (surviving mutants): the
// range's upper bound moved, and itoa's loop or digit arithmetic broken,
// which named every status "http 0".
func TestFatalStatusReason(t *testing.T) {
	for _, status := range []int{400, 418, 499} {
		want := "fatal: http " + strconv.Itoa(status)
		if v := Classify(Failure{Status: status, Body: "no"}); v.Class != Fatal || v.Reason != want {
			t.Errorf("%d: %v %q, want fatal %q", status, v.Class, v.Reason, want)
		}
	}
}
