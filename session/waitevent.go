package session

// The events of a wait for a usage limit's reset (retry.waitForReset).
const (
	// RetryWaiting says that a retry waits for a usage limit's reset:
	// once, after its auto_retry_start, so a hook can tell the user.
	RetryWaiting EventType = "retry_waiting"
	// RetryHeartbeat ticks through such a wait, saying how long is left.
	RetryHeartbeat EventType = "retry_heartbeat"
)

// RetryWaitingEvent says that retry Attempt waits until UntilMs (Unix
// milliseconds, on the wall clock) for a usage limit's reset: DelayMs from
// now, as Reason (the policy's reason) says.
type RetryWaitingEvent struct {
	Attempt int    `json:"attempt"`
	DelayMs int64  `json:"delayMs"`
	UntilMs int64  `json:"untilMs"`
	Reason  string `json:"reason"`
}

// RetryHeartbeatEvent says, every HeartbeatInterval of a wait for a reset,
// how long is left before retry Attempt starts.
type RetryHeartbeatEvent struct {
	Attempt     int   `json:"attempt"`
	RemainingMs int64 `json:"remainingMs"`
}

func (RetryWaitingEvent) Kind() EventType   { return RetryWaiting }
func (RetryHeartbeatEvent) Kind() EventType { return RetryHeartbeat }
