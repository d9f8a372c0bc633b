package cli

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/app/print"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rally-agent/rally/internal/app/tui"
	"github.com/rally-agent/rally/internal/termsafe"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/spf13/cobra"
)

// maxSessionList bounds how many sessions rally sessions and /resume read
// and list: the newest are the ones worth resuming.
const maxSessionList = 20

// sessionSummary is one line of rally sessions and of the UI's /resume.
type sessionSummary struct {
	Path        string
	Modified    time.Time
	FirstPrompt string
	// Messages counts the working context, as a resume would load it.
	Messages int
	// Retries counts failed calls that a retry replaced.
	Retries int
	// Model is provider/model of the last answer ("" before any).
	Model string
	// Err is set when the file could not be read; the rest is then zero.
	Err error
}

// sessionsDir is where a directory's sessions live: --session-dir, or
// $RALLY_HOME/sessions/<cwd slug>.
func sessionsDir(home, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return journal.Dir(home, cwd), nil
}

// listSessions reads the newest max sessions of dir, newest first by last
// use (modification time, not the name's creation time: a session resumed
// today comes before one started yesterday and left alone). A directory
// that does not exist has none.
func listSessions(dir string, max int) ([]sessionSummary, error) {
	paths, err := journal.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	used := make(map[string]time.Time, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			used[p] = fi.ModTime()
		}
	}
	slices.SortStableFunc(paths, func(a, b string) int { return used[b].Compare(used[a]) })
	paths = paths[:min(len(paths), max)]
	out := make([]sessionSummary, len(paths))
	for i, p := range paths {
		out[i] = summarize(p)
	}
	return out, nil
}

func summarize(path string) sessionSummary {
	s := sessionSummary{Path: path}
	if fi, err := os.Stat(path); err == nil {
		s.Modified = fi.ModTime()
	}
	l, err := journal.Load(path)
	if err != nil {
		s.Err = err
		return s
	}
	s.Messages, s.FirstPrompt = len(l.Messages), l.FirstPrompt()
	for _, e := range l.Entries {
		if e.Message == nil || e.Message.Role != llm.Assistant {
			continue
		}
		if e.Retried {
			s.Retries++
		}
		if e.Message.Provider != "" {
			s.Model = e.Message.Provider + "/" + e.Message.Model
		}
	}
	return s
}

func newSessionsCmd(s streams) *cobra.Command {
	var dir, resume string
	cmd := &cobra.Command{
		Use:   "sessions [--resume [N]]",
		Short: "List this directory's sessions, newest first; --resume opens one in the UI",
		Long: `Lists the sessions of the working directory (or of --session-dir), newest
first: when each was last written, its message count, the retries it took,
the model of its last answer and its first prompt. The terminal UI's /resume
shows the same list.

--resume N opens session N of the list in the terminal UI; --resume alone
shows the list and asks for the number. To continue one in print mode
instead, give its file: rally --session FILE -p "…".`,
		Example: `  rally sessions
  rally sessions --resume 1    # the newest, in the terminal UI`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := sessionsDir(rallyHome(), dir)
			if err != nil {
				return err
			}
			list, err := listSessions(d, maxSessionList)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("resume") {
				if len(args) > 0 {
					return &exitError{2, fmt.Errorf("rally sessions: unexpected %q (did you mean --resume %s?)", args[0], args[0])}
				}
				return writeSessions(s.out, list, s.clock())
			}
			if len(list) == 0 {
				return &exitError{1, fmt.Errorf("sessions: no sessions in %s", d)}
			}
			pick := resume
			if pick == "ask" && len(args) == 1 {
				pick = args[0]
			}
			if pick == "ask" {
				if err := writeSessions(s.out, list, s.clock()); err != nil {
					return err
				}
				fmt.Fprintf(s.out, "resume which (1-%d)? ", len(list))
				line, err := bufio.NewReader(s.in).ReadString('\n')
				if err != nil && (err != io.EOF || line == "") {
					return &exitError{2, errors.New("sessions: --resume: no number given")}
				}
				pick = strings.TrimSpace(line)
			}
			n, err := strconv.Atoi(pick)
			if err != nil || n < 1 || n > len(list) {
				return &exitError{2, fmt.Errorf("sessions: --resume takes a number from 1 to %d, got %q", len(list), pick)}
			}
			f := runFlags{mode: "text", file: list[n-1].Path, sessionDir: dir}
			ui := s.ui
			if ui == nil {
				ui = runUI
			}
			return ui(cmd, s, &f, "")
		},
	}
	cmd.Flags().StringVar(&dir, "session-dir", "", "the directory of the session files (default $RALLY_HOME/sessions/<cwd>)")
	cmd.Flags().StringVar(&resume, "resume", "", "open session N of the list in the terminal UI (alone: ask which)")
	cmd.Flags().Lookup("resume").NoOptDefVal = "ask"
	return cmd
}

// writeSessions writes the numbered table of rally sessions.
func writeSessions(w io.Writer, list []sessionSummary, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no sessions in this directory yet; start one with: rally -p \"…\" or rally")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tWHEN\tMESSAGES\tRETRIES\tMODEL\tFIRST PROMPT")
	for i, s := range list {
		if s.Err != nil {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t(unreadable: %s)\n", i+1, tui.Age(now.Sub(s.Modified)), termsafe.String(print.Clip(s.Err.Error(), 60)))
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", i+1, tui.Age(now.Sub(s.Modified)), s.Messages, s.Retries, termsafe.String(dash(s.Model)), termsafe.String(print.Clip(s.FirstPrompt, 60)))
	}
	return tw.Flush()
}
