package cli

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/internal/app/tui"
)

// uiNotices is the stderr of a run under the terminal UI. Everything a
// run says on stderr (settings warnings, a fallback model in use, Redis
// not answering, a session in use, a fleet wait) would be written over
// the UI's screen, so each line goes to the UI instead, through
// tui.Alerts and Program.Send, and to the log. Routing the stream rather
// than each writer keeps every present and future notice off the screen.
// Once the UI has ended, lines go to the real stderr again.
type uiNotices struct {
	alerts *tui.Alerts
	log    *slog.Logger
	after  io.Writer // the real stderr, for lines said after the UI ended

	mu  sync.Mutex
	buf []byte // a line not yet ended
}

func (u *uiNotices) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buf = append(u.buf, p...)
	for {
		i := bytes.IndexByte(u.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(u.buf[:i])
		u.buf = u.buf[i+1:]
		u.line(line)
	}
}

// line shows one line in the transcript, without the "rally: " that
// tells it apart on a shared stderr.
func (u *uiNotices) line(line string) {
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "rally:"))
	if text == "" {
		return
	}
	u.log.Info("ui notice", "text", text)
	if !u.alerts.Notice(text) {
		io.WriteString(u.after, line+"\n")
	}
}

// showWait puts a fleet wait in the status line for its length (the
// gate logs it): a wait is a state, not an event for the transcript.
func (u *uiNotices) showWait(text string, d time.Duration) {
	if !u.alerts.Waiting(text, d) {
		io.WriteString(u.after, "rally: "+text+"\n")
	}
}

// waitShower is a notices writer that shows a fleet wait in a status line
// rather than as a line of text: the UI's uiNotices.
type waitShower interface {
	showWait(text string, d time.Duration)
}
