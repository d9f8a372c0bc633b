package session

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
)

// stuckWindows is a shared window store that accepted the connection and
// never answers (a Redis gone silent): each call returns only when its
// context ends.
type stuckWindows struct{ calls int }

func (w *stuckWindows) Window(ctx context.Context, _, _, _ string) (int, error) {
	w.calls++
	<-ctx.Done()
	return 0, ctx.Err()
}

func (w *stuckWindows) Learn(ctx context.Context, _, _, _ string, _ int) error {
	<-ctx.Done()
	return ctx.Err()
}

// A signal during start-up cancels NewContext's context: building the
// session stops waiting for the learned window at once, not after
// windowTimeout; New (no context) still waits the timeout at most.
func TestNewContextEndsTheWindowRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel time.Duration // when the caller's context ends; 0: never
		want   time.Duration
	}{
		{"cancelled at 10ms", 10 * time.Millisecond, 10 * time.Millisecond},
		{"never cancelled", 0, windowTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				if tc.cancel > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.cancel)
					defer cancel()
				}
				w := &stuckWindows{}
				start := time.Now()
				s, err := NewContext(ctx, Config{Provider: &fake{}, Model: llm.Model{ID: "m", Provider: "p"}, Windows: w})
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took != tc.want {
					t.Errorf("NewContext took %v, want %v", took, tc.want)
				}
				if w.calls != 1 || s == nil {
					t.Errorf("window read %d times, session %v", w.calls, s)
				}
				if tc.cancel > 0 && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
					t.Errorf("ctx %v", ctx.Err())
				}
			})
		})
	}
}
