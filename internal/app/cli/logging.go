package cli

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// newLogger logs JSON lines to $RALLY_HOME/logs/rally.log and, with
// verbose, text to stderr. A log that cannot be opened is not fatal: rally
// runs on and says so once.
func newLogger(home string, stderr io.Writer, verbose bool) (*slog.Logger, func()) {
	var handlers []slog.Handler
	closeFn := func() {}
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err == nil {
		f, err := os.OpenFile(filepath.Join(dir, "rally.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err == nil {
			handlers = append(handlers, slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
			closeFn = func() { f.Close() }
		} else {
			io.WriteString(stderr, "rally: cannot open log file: "+err.Error()+"\n")
		}
	}
	if verbose {
		handlers = append(handlers, slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewMultiHandler(handlers...)), closeFn
}
