package session

import "fmt"

// CallsMade says how far a retry chain went by counting what happened:
// the calls made and the retries among them, "3 calls (2 retries)" or "2
// calls (1 retry)". retries is what auto_retry_end's attempt and
// RunError.Retries count. rally's own messages say a chain's end with it
// rather than "after N attempts", which read as one call fewer than were
// made.
func CallsMade(retries int) string {
	calls, noun := "calls", "retries"
	if retries == 0 {
		calls = "call"
	}
	if retries == 1 {
		noun = "retry"
	}
	return fmt.Sprintf("%d %s (%d %s)", retries+1, calls, retries, noun)
}
