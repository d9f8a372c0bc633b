package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// errInterrupted is how a run that a signal ended reports itself: the
// user pressed Ctrl-C, nothing failed, so no Go error string is shown.
var errInterrupted = errors.New("interrupted")

// stopped is the cancel cause of a context ended by a stop signal.
type stopped struct{ sig os.Signal }

func (s stopped) Error() string { return s.sig.String() + " signal received" }

// withStopSignals is signal.NotifyContext for stopSignals, with the signal
// kept as the context's cause so that interrupted can tell a Ctrl-C from
// a failure.
func withStopSignals(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals()...)
	go func() {
		select {
		case sig := <-ch:
			cancel(stopped{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// interrupted turns the error of a run that a stop signal ended into the
// conventional exit status, 128 plus the signal number (130 for Ctrl-C),
// with the message "interrupted" (or the signal's name, "terminated" for
// SIGTERM, "hangup" for SIGHUP).
// Any other error, and nil, pass through.
func interrupted(ctx context.Context, err error) error {
	var s stopped
	if err == nil || !errors.As(context.Cause(ctx), &s) {
		return err
	}
	code := 130
	msg := errInterrupted
	if n, ok := s.sig.(syscall.Signal); ok && n != syscall.SIGINT {
		code = 128 + int(n)
		msg = errors.New(s.sig.String()) // "terminated", "hangup"
	}
	return &exitError{code, msg}
}
