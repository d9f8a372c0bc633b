package cli

import (
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/settings"
)

// What rally tells the user about its session file, in every mode: a save
// that failed (a full disk) and what loading a resumed session skipped.

// maxLoadWarnings is how many load warnings are printed; the rest are
// counted (all of them are logged, and get_state lists them).
const maxLoadWarnings = 10

// reportLoad prints the warnings of loading a resumed session on stderr
// and logs them: a torn last line or dropped lines are never silent.
func reportLoad(stderr io.Writer, log *slog.Logger, path string, warnings []string) {
	for i, w := range warnings {
		log.Warn("session load", "file", path, "warning", w)
		if i < maxLoadWarnings {
			fmt.Fprintf(stderr, "rally: %s: %s\n", path, termsafe.String(w))
		}
	}
	if n := len(warnings) - maxLoadWarnings; n > 0 {
		fmt.Fprintf(stderr, "rally: %s: %d more warnings in the log\n", path, n)
	}
}

// storeNotices prints every session_error on stderr as it happens: the
// session goes on in memory, but the user must know the file lacks it.
func storeNotices(sess *session.Session, stderr io.Writer) (stop func()) {
	// Only session_error: a subscriber of every event would copy and
	// hand over each streamed delta to read none of them.
	return sess.SubscribeTo([]session.EventType{session.SessionError}, func(e session.Event) {
		if e, ok := e.(session.SessionErrorEvent); ok {
			fmt.Fprintf(stderr, "rally: the session file was not saved (%s): %s; the session goes on in memory\n", e.Op, e.ErrorMessage)
		}
	})
}

// incomplete is the exit of a run whose answer arrived but whose session
// file lacks part of it: status 1, the first failure named.
func incomplete(sess *session.Session) error {
	err := sess.StoreErr()
	if err == nil {
		return nil
	}
	return &exitError{1, fmt.Errorf("the session was not fully saved: %w", err)}
}

// openLocked is the error of --session FILE (or rally compact's session)
// when another rally writes it (err wraps journal.ErrLocked): a failure,
// not bad usage.
func openLocked(err error) error {
	return &exitError{1, fmt.Errorf("%w; wait for it to finish, or leave out --session to start a new session", err)}
}

// partialsHidden reports that nothing shows a message before it ends:
// print mode (not the UI) into a pipe or file, with no hook on
// message_update. Then a
// failed call's streamed text was seen by no one, and retry.streaming
// "beforeOutput" may still retry it.
func partialsHidden(f *runFlags, s streams, st *settings.Settings) bool {
	if f.ui || f.mode != "text" || printsLive(s) {
		return false
	}
	for _, h := range st.Hooks {
		if slices.Contains(h.On, string(session.MessageUpdate)) {
			return false
		}
	}
	return true
}

// printsLive reports whether print mode streams the answer as it arrives
// (on a terminal) rather than writing each message when it is whole.
func printsLive(s streams) bool { return isTerminal(s.out) }
