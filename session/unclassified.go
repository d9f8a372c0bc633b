package session

import (
	"context"

	"github.com/rally-agent/rally/retry"
)

// Unclassified keeps the failures no classifier rule recognised (the
// report's Signal is a fallback), so that a user can report a new kind of
// error: package unclassified's File keeps them in $RALLY_HOME. Record is
// told every failure; it keeps what it wants, redacted, once.
type Unclassified interface {
	Record(ctx context.Context, f retry.Failure, r retry.Report) error
}

// noteUnclassified hands a failure the fallback decided to
// Config.Unclassified, within windowTimeout: a slow disk costs a failed
// call this much at most, and a failure to keep it is only logged.
func (s *Session) noteUnclassified(ctx context.Context, err error, rep retry.Report) {
	if s.cfg.Unclassified == nil || !rep.Signal.Fallback() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, windowTimeout)
	defer cancel()
	if err := s.cfg.Unclassified.Record(ctx, retry.FailureOf(err), rep); err != nil {
		s.logger().Warn("session: keep an unclassified error", "err", err.Error())
	}
}
