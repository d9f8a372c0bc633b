package retry

import "fmt"

// Class is what a failure means for the caller. Every failed model call gets
// exactly one class.
type Class int

const (
	// Fatal failures cannot be fixed by time: bad key, bad request, unknown
	// model, refusal, billing. The zero Class is Fatal, so an unclassified
	// error is never retried by accident.
	Fatal Class = iota
	// Transient failures are fixed by waiting: overload, rate limit, 5xx,
	// network failure, idle or truncated stream.
	Transient
	// UsageLimit failures are quotas or plan limits that reset in minutes to
	// days: switch credential or model, or wait only if the reset is near.
	UsageLimit
	// ContextOverflow means the request does not fit the model's context.
	// It is never retried; the caller compacts instead.
	ContextOverflow
)

var classNames = [...]string{
	Fatal:           "fatal",
	Transient:       "transient",
	UsageLimit:      "usage_limit",
	ContextOverflow: "context_overflow",
}

// String returns the wire name: "fatal", "transient", "usage_limit" or
// "context_overflow".
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Retryable reports whether the class may start or continue a retry chain.
func (c Class) Retryable() bool { return c == Transient || c == UsageLimit }

// MarshalText encodes the class as its wire name.
func (c Class) MarshalText() ([]byte, error) {
	if c < 0 || int(c) >= len(classNames) {
		return nil, fmt.Errorf("retry: unknown class %d", int(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText decodes a wire name.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("retry: unknown class %q", b)
}
