package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rally-agent/rally/retry"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/settings"
)

// waitForResetOn is --wait-for-reset given without a value: on, with the
// settings' maxWaitMs.
const waitForResetOn = "on"

// registerWaitForReset adds --wait-for-reset[=DUR] to the run's flags.
func (f *runFlags) registerWaitForReset(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.waitForReset, "wait-for-reset", "", "wait out a usage limit whose stated reset is at most DUR away (default retry.waitForReset.maxWaitMs, 6h) when no other credential or model is left, then retry once")
	fl.Lookup("wait-for-reset").NoOptDefVal = waitForResetOn
}

// applyWaitForReset turns retry.waitForReset on for --wait-for-reset,
// with DUR as its maxWaitMs, checked by the setting's own schema rule.
func applyWaitForReset(st *settings.Settings, flag string) error {
	if flag == "" {
		return nil
	}
	w := st.Retry.WaitForReset
	w.Enabled = true
	if flag != waitForResetOn {
		d, err := time.ParseDuration(flag)
		if err != nil {
			return &exitError{2, fmt.Errorf("--wait-for-reset: %q is not a duration like 3h or 90m", flag)}
		}
		file, err := settings.ParseFile(settings.Source{Name: "--wait-for-reset"}, nil)
		if err == nil {
			err = file.Set("retry.waitForReset.maxWaitMs", int(d/time.Millisecond))
		}
		if err == nil {
			_, err = file.Check()
		}
		if errs := settings.Errors(err); len(errs) > 0 {
			return &exitError{2, fmt.Errorf("--wait-for-reset %s: maxWaitMs %s", flag, errs[0].Msg)}
		}
		if err != nil {
			return &exitError{2, err}
		}
		w.MaxWaitMs = int(d / time.Millisecond)
	}
	st.Retry.WaitForReset = w
	return nil
}

// interruptedWait is the wait for a usage limit's reset that the run's
// session file was stopped in, if any.
func (e *runEnv) interruptedWait() *journal.Wait {
	if e.journal == nil {
		return nil
	}
	w, err := journal.InterruptedWait(e.journal.Path())
	if err != nil {
		e.log.Warn("reading the session file for an interrupted wait failed", "err", err.Error())
		return nil
	}
	return w
}

// sayInterrupted tells w about an interrupted wait for a reset and
// reports whether the run is to resume it: under --wait-for-reset (or
// retry.waitForReset) it is; otherwise w says how.
func sayInterrupted(w io.Writer, now time.Time, st *settings.Settings, wait *journal.Wait) bool {
	note, resume := interruptedNote(now, st, wait)
	fmt.Fprintf(w, "rally: %s\n", note)
	return resume
}

// interruptedNote is what every face says of an interrupted wait for a
// reset, and whether it is resumed (retry.waitForReset is on).
func interruptedNote(now time.Time, st *settings.Settings, wait *journal.Wait) (string, bool) {
	at := retry.WallClock(now, wait.Until)
	if !st.Retry.WaitForReset.Enabled {
		return fmt.Sprintf("a usage-limit wait until %s was interrupted; --wait-for-reset resumes it", at), false
	}
	return fmt.Sprintf("a usage-limit wait until %s was interrupted; resuming it", at), true
}

// resumeWaitPrint is print mode's answer to an interrupted wait: resumed,
// it finishes the interrupted prompt before the new one.
func resumeWaitPrint(ctx context.Context, s streams, e *runEnv) error {
	if w := e.interruptedWait(); w != nil && sayInterrupted(s.err, s.clock(), e.st, w) {
		return e.sess.ResumeWait(ctx, *w)
	}
	return nil
}

// resumeSwitched is RPC's answer to an interrupted wait in the session it
// serves first (--continue, --session) or that switch_session opened:
// resumed, it is a run the client sees
// (retry_waiting, auto_retry_start with the time left, then the continued
// prompt).
func (b *rpcBackend) resumeSwitched(ctx context.Context, sess *session.Session, watch func()) {
	e := b.current()
	if e.sess != sess {
		return
	}
	if w := e.interruptedWait(); w != nil && sayInterrupted(b.s.err, b.s.clock(), e.st, w) {
		watch()
		if _, err := sess.StartResumeWait(ctx, *w); err != nil {
			b.log.Warn("resuming the interrupted wait failed", "err", err.Error())
		}
	}
}
