package web

// Every read of a session file is in this file, through the journal
// package's public API (journal.Load and its Loaded/Entry types), and
// everything it reads is turned into the console's own view types at once.
// When persistence changes, only this file does.

import (
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

// loadSession reads one session file of dir into the transcript view,
// with keys and key-shaped tokens hidden (redactView).
func loadSession(dir, name string, keys []string) (*sessionView, error) {
	if !validSessionName(name) {
		return nil, fmt.Errorf("load session %q: %w", name, errNotSession)
	}
	// The list leaves out what is not a plain file (listSessionFiles); the
	// page must not open what the list hides.
	p := filepath.Join(dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("load session %q: %w", name, errNotSession)
	}
	ld, err := journal.Load(p)
	if err != nil {
		return nil, err
	}
	ld.EstimateDecisions() // an older file's failures still show, marked as guesses
	v := &sessionView{Warnings: ld.Warnings}
	v.Name, v.ID, v.Title = name, ld.ID, ld.Name
	v.Entries = make([]entryView, 0, len(ld.Entries))
	for i := range ld.Entries {
		v.Entries = append(v.Entries, viewEntry(&ld.Entries[i]))
	}
	v.redact(keys)
	v.summarize()
	return v, nil
}

// redact hides the known keys and every key-shaped token in what the
// console shows of v (DESIGN §4: no key in the web console), whatever the
// file holds: rally writes none, but an older file, pi's, or one a tool
// wrote may. It runs before summarize, which derives the title and the
// error classes from these fields.
func (v *sessionView) redact(keys []string) {
	r := func(s *string) { *s = redact.Secrets(*s, keys...) }
	r(&v.Title)
	for i := range v.Warnings {
		r(&v.Warnings[i])
	}
	for i := range v.Entries {
		e := &v.Entries[i]
		for _, f := range []*string{&e.Role, &e.Model, &e.Provider, &e.Error, &e.ToolName, &e.Text, &e.Reason, &e.SwitchedTo} {
			r(f)
		}
		for j := range e.Blocks {
			r(&e.Blocks[j].Name)
			r(&e.Blocks[j].Text)
		}
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
