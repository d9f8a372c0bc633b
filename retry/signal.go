package retry

// Signal names the kind of evidence that decided a Verdict. Classify
// consults them in the order doc.go gives; the constants follow it.
type Signal uint8

const (
	// SignalUnknown is the zero Signal: nothing said which signal decided
	// (a Report a custom classifier made by hand).
	SignalUnknown Signal = iota
	// SignalNone: nothing recognised the failure; the class is the Fatal
	// default, so an unknown error is never retried by accident.
	SignalNone
	// SignalOverflow: a size stated against a context limit, in a code or
	// in words.
	SignalOverflow
	// SignalHeader: the server's explicit x-should-retry.
	SignalHeader
	// SignalCode: a typed error code or type ("overloaded_error",
	// "insufficient_quota", Bedrock's exception names).
	SignalCode
	// SignalFamily: a family of meaning read from the words: billing, a
	// quota by the day or plan, a content block, a missing model or route,
	// a bad certificate, a machine too small for the model.
	SignalFamily
	// SignalStatus: the HTTP status alone.
	SignalStatus
	// SignalWait: the size of the wait the failure states.
	SignalWait
	// SignalNetwork: a network failure, by Go error type or as a client
	// prints it.
	SignalNetwork
	// SignalText: the last-resort text rules.
	SignalText
)

var signalNames = [...]string{
	SignalUnknown:  "",
	SignalNone:     "none",
	SignalOverflow: "overflow",
	SignalHeader:   "header",
	SignalCode:     "code",
	SignalFamily:   "family",
	SignalStatus:   "status",
	SignalWait:     "wait",
	SignalNetwork:  "network",
	SignalText:     "text",
}

// String returns the signal's name, as `rally classify --explain` prints it.
func (s Signal) String() string {
	if int(s) < len(signalNames) {
		return signalNames[s]
	}
	return "unknown"
}

// Fallback reports that no rule that understands the failure decided it:
// only the last-resort text rules or the Fatal default did. Such errors are
// the ones worth reporting (see rally classify --unclassified).
func (s Signal) Fallback() bool { return s == SignalNone || s == SignalText }
