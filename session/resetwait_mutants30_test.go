package session

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/internal/proctest"
)

// TestResetWaitJumpThreshold: during a wait for a reset, a wall clock
// moved by more than clockJump either way is logged, and one moved by
// exactly clockJump is not. Mutants caught (resetwait.go:53, alive in this
// round's diff run): the jump computed as the wall clock's step plus the
// monotonic one (a clock set back by a little more than clockJump, between
// two one-second checks, read as under it), and either bound made
// inclusive.
func TestResetWaitJumpThreshold(t *testing.T) {
	tests := []struct {
		name   string
		jump   time.Duration
		logged bool
	}{
		{"back by exactly clockJump", -clockJump, false},
		{"forward by exactly clockJump", clockJump, false},
		{"back by a second more", -clockJump - time.Second, true},
		{"forward by a second more", clockJump + time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var offset atomic.Int64
				wall := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
				logs := &proctest.Buffer{}
				f := &fake{steps: []step{{err: planLimit("60")}, {text: "back"}}}
				s, _, stop := newSession(t, f, Config{Retry: waitPolicy, Now: wall, Log: slog.New(slog.NewTextHandler(logs, nil))})
				run, err := s.Start(context.Background(), "hi", PromptOptions{})
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				// Between two of the wait's one-second checks.
				time.Sleep(10*time.Second + checkInterval/2)
				offset.Store(int64(tt.jump))
				if err := run.Wait(); err != nil {
					t.Fatal(err)
				}
				stop()
				if got := strings.Contains(logs.String(), "wall clock jumped"); got != tt.logged {
					t.Errorf("logged a jump %v, want %v:\n%s", got, tt.logged, logs.String())
				}
			})
		})
	}
}
