package session

import (
	"errors"
	"testing"

	"github.com/rally-agent/rally/retry"
)

// TestCallsMade: a chain's end counts the calls made and the retries
// among them, in the right number; "retry failed after 2 attempts" was
// said after 3 calls, and "after 1 attempts" after 2.
func TestCallsMade(t *testing.T) {
	for retries, want := range map[int]string{0: "1 call (0 retries)", 1: "2 calls (1 retry)", 2: "3 calls (2 retries)", 10: "11 calls (10 retries)"} {
		if got := CallsMade(retries); got != want {
			t.Errorf("CallsMade(%d) = %q, want %q", retries, got, want)
		}
	}
	err := &RunError{Class: retry.Transient, Retries: 2, Exhausted: true, Err: errors.New("fake-llm: 503 service unavailable")}
	if got, want := err.Error(), "retry failed after 3 calls (2 retries): fake-llm: 503 service unavailable"; got != want {
		t.Errorf("RunError %q, want %q", got, want)
	}
}
