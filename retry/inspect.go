package retry

import "time"

// Report is everything one failure tells the caller, read once: its class
// and the rule that decided it, the wait the server asked for, and its
// message (for logs and usage-limit marks; it may echo a key, so redact it
// before storing it).
type Report struct {
	Class Class
	// Reason says in a few words which rule decided the class.
	Reason string
	// Hint is the wait the server asked for, or 0 (see Hint).
	Hint time.Duration
	// Message is the failure's text.
	Message string
	// Window and Requested are the sizes a ContextOverflow states (see
	// Verdict): the context window to learn, the request that overflowed.
	Window, Requested int
	// Signal is the kind of evidence that decided the class (see Verdict).
	Signal Signal
}

// Inspect reads a failed model call once: FailureOf, Classify and Hint
// together, so that every caller agrees on what err means. now is the
// current time, for hints given as a reset time.
func Inspect(err error, now time.Time) Report {
	if err == nil {
		return Report{}
	}
	f := FailureOf(err)
	v := Classify(f)
	return Report{Class: v.Class, Reason: v.Reason, Hint: Hint(f, now), Message: err.Error(), Window: v.Window, Requested: v.Requested, Signal: v.Signal}
}
