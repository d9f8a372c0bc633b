package web

// Every read of a session file is in this file, through the journal
// package's public API (journal.Scan and its Entry type), and
// everything it reads is turned into the console's own view types at once.
// When persistence changes, only this file does.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
)

// sessionFile is one candidate file of a session directory.
type sessionFile struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// listSessionFiles returns the session files of dir, newest first, as
// journal.List names them (so the console lists what rally sessions
// does). A missing directory is no sessions.
func listSessionFiles(dir string) ([]sessionFile, error) {
	paths, err := journal.List(dir)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]sessionFile, 0, len(paths))
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // removed while listing, or not a plain file
		}
		out = append(out, sessionFile{Name: filepath.Base(p), Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return out, nil
}

// validSessionName reports whether name can only mean a file directly in
// the session directory: no separators, no dot-dot, a .jsonl name.
func validSessionName(name string) bool {
	return name != "" && filepath.Base(name) == name && !strings.ContainsAny(name, `/\`) &&
		!strings.ContainsFunc(name, unicode.IsControl) && // a NUL is no file name: "no such session", not an error
		strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}

// errNotSession is loadSession's answer for a name the sessions list would
// not show: a bad name, or a path that is not a plain file (a symlink to
// somewhere else, a directory, a FIFO). It is fs.ErrNotExist, so the page
// says "no such session" (404).
var errNotSession = fmt.Errorf("not a session file: %w", fs.ErrNotExist)

// loadSession reads the first page of a session file of dir into the
// transcript view (for a session of one page, all of it).
func loadSession(dir, name string, keys []string) (*sessionView, error) {
	v, _, err := loadSessionPage(context.Background(), dir, name, keys, 1)
	return v, err
}

// sessionPath is the file of session name in dir, if the sessions list
// would show it.
func sessionPath(dir, name string) (string, error) {
	if !validSessionName(name) {
		return "", fmt.Errorf("load session %q: %w", name, errNotSession)
	}
	// The list leaves out what is not a plain file (listSessionFiles); the
	// page must not open what the list hides.
	p := filepath.Join(dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("load session %q: %w", name, errNotSession)
	}
	return p, nil
}

// pageStart is where a page of the transcript starts in the file, with
// what estimating decisions had learned by then, so the page is read
// again from there alone.
type pageStart struct {
	at  journal.Pos
	est journal.DecisionEstimator
}

// scanSession reads session name of dir once, an entry at a time, for
// what the sessions list and the top of its page show (the sessionInfo,
// the warnings) and where each page of its transcript starts. It holds
// one entry at a time, so what it costs in memory does not grow with the
// file (issue 24, defect 10); v has no entries.
func scanSession(ctx context.Context, dir, name string, keys []string) (v *sessionView, pg *pages, starts []pageStart, err error) {
	p, err := sessionPath(dir, name)
	if err != nil {
		return nil, nil, nil, err
	}
	v, pg = &sessionView{}, &pages{}
	var est journal.DecisionEstimator
	sc, err := journal.Scan(ctx, p, journal.Pos{}, func(e *journal.Entry, at journal.Pos) bool {
		before := est
		est.Next(e) // an older file's failures still show, marked as guesses
		ev := viewEntry(e)
		if v.Title == "" && ev.Kind == kindUser {
			redactBlocks(&ev, keys) // it may become the title
		}
		if pg.add(shownBytes(&ev)) {
			starts = append(starts, pageStart{at: at, est: before})
		}
		v.count(&ev)
		return true
	})
	if err != nil {
		return nil, nil, nil, err
	}
	v.Name, v.ID, v.Warnings = name, sc.ID, sc.Warnings
	if sc.MoreWarnings > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("… and %d more", sc.MoreWarnings))
	}
	if sc.Name != "" {
		v.Title = sc.Name
	}
	r := func(s *string) { *s = redact.Secrets(*s, keys...) }
	r(&v.Title)
	r(&v.Model)
	for i := range v.Warnings {
		r(&v.Warnings[i])
	}
	return v, pg, starts, nil
}

// loadSessionPage reads page (1-based; past the last is the last) of
// session name of dir into the transcript view, with keys and key-shaped
// tokens hidden (redactView): the file is read once for its summary and
// its pages (scanSession), and once more from where the page starts to
// where it ends, so a view holds one page of entries whatever the file's
// size.
func loadSessionPage(ctx context.Context, dir, name string, keys []string, page int) (*sessionView, *pager, error) {
	v, pgs, starts, err := scanSession(ctx, dir, name, keys)
	if err != nil {
		return nil, nil, err
	}
	pg, i, n := pgs.pager(name, page)
	if n == 0 {
		return v, pg, nil
	}
	est := starts[i].est
	v.Entries = make([]entryView, 0, n)
	_, err = journal.Scan(ctx, filepath.Join(dir, name), starts[i].at, func(e *journal.Entry, _ journal.Pos) bool {
		est.Next(e)
		v.Entries = append(v.Entries, viewEntry(e))
		return len(v.Entries) < n
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range v.Entries {
		e := &v.Entries[i]
		redactEntry(e, keys)
		e.prepare()
		cutBlocks(e)
	}
	return v, pg, nil
}

// redactEntry hides the known keys and every key-shaped token in what
// the console shows of e (DESIGN §4: no key in the web console), whatever
// the file holds: rally writes none, but an older file, pi's, or one a
// tool wrote may. It runs before prepare, which derives the title and the
// error classes from these fields.
func redactEntry(e *entryView, keys []string) {
	for _, f := range []*string{&e.Role, &e.Model, &e.Provider, &e.Error, &e.ToolName, &e.Text, &e.Reason, &e.SwitchedTo} {
		*f = redact.Secrets(*f, keys...)
	}
	redactBlocks(e, keys)
}

func redactBlocks(e *entryView, keys []string) {
	for j := range e.Blocks {
		e.Blocks[j].Name = redact.Secrets(e.Blocks[j].Name, keys...)
		e.Blocks[j].Text = redact.Secrets(e.Blocks[j].Text, keys...)
	}
}

// chainResumed is the ChainEnd of an answer whose stream dropped and was
// resumed, not retried (retry.streaming "resume").
const chainResumed = string(journal.EndResumed)

// viewEntry converts one journal entry.
func viewEntry(e *journal.Entry) entryView {
	ev := entryView{ID: e.ID, Type: e.Type, End: e.Timestamp, Retried: e.Retried}
	if d := e.Decision(); d != nil {
		ev.Decided, ev.Estimated, ev.Attempt, ev.DelayMs = true, d.Estimated, d.Attempt, d.DelayMs
		ev.Class, ev.Reason, ev.ChainEnd, ev.SwitchedTo = d.Class, d.Reason, string(d.End), d.SwitchedTo
	}
	switch e.Type {
	case "message":
		viewMessage(&ev, e.Message)
		if ev.Role != "" && len(ev.Blocks) == 0 {
			// pi's own kinds (bashExecution…) keep their fields beside
			// the message's: show them as written.
			ev.Text = string(e.Details().PiMessage)
		}
	case "compaction":
		ev.Kind, ev.Text, ev.TokensBefore = kindCompaction, e.Details().Summary, e.Details().TokensBefore
	case "model_change":
		ev.Kind, ev.Model = kindModelChange, e.Details().Provider+"/"+e.Details().ModelID
	case "branch_summary":
		ev.Kind, ev.Text = kindNote, e.Details().Summary
	default:
		ev.Kind = kindNote
	}
	return ev
}

// viewMessage fills the message part of a view entry.
func viewMessage(ev *entryView, m *llm.Message) {
	if m == nil {
		ev.Kind = kindNote
		return
	}
	if m.Timestamp > 0 {
		ev.Start = time.UnixMilli(m.Timestamp)
	}
	switch m.Role {
	case llm.User:
		ev.Kind = kindUser
	case llm.Assistant:
		ev.Kind = kindAssistant
		if m.Provider != "" || m.Model != "" {
			ev.Model = m.Provider + "/" + m.Model
		}
		ev.Provider = m.Provider
		ev.StopReason = string(m.StopReason)
		ev.Error = m.ErrorMessage
		if u := m.Usage; u != nil {
			ev.TokensIn, ev.TokensOut = u.Input+u.CacheRead+u.CacheWrite, u.Output
		}
	case llm.ToolResult:
		ev.Kind = kindToolResult
		ev.ToolName, ev.IsError = m.ToolName, m.IsError
	default:
		ev.Kind = kindUser // pi's custom and bashExecution messages come from the user's side
		ev.Role = string(m.Role)
	}
	for _, c := range m.Content {
		switch c.Type {
		case llm.TextType:
			ev.Blocks = append(ev.Blocks, block{Kind: "text", Text: c.Text})
		case llm.ThinkingType:
			ev.Blocks = append(ev.Blocks, block{Kind: "thinking", Text: c.Thinking})
		case llm.ToolCallType:
			ev.Blocks = append(ev.Blocks, block{Kind: "toolCall", Name: c.Name, Text: string(c.Arguments)})
		case llm.ImageType:
			ev.Blocks = append(ev.Blocks, block{Kind: "image", Text: c.MimeType})
		}
	}
}
