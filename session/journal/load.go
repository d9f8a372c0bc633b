package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rally-agent/rally/llm"
)

// Loaded is what a session file holds.
type Loaded struct {
	ID, Cwd, Name string
	// Messages is the context to send to the model when resuming: the
	// message entries in order, except retried ones, and after the latest
	// compaction only a user message carrying its summary followed by the
	// entries from its first kept entry on. Like pi, it follows the
	// parentId chain from the last entry, so abandoned branches of a
	// session written by pi are left out; pi's own message kinds (custom,
	// bashExecution, summaries) become the user messages pi would send.
	Messages []llm.Message
	// IDs holds the entry id of each message of Messages ("" for the
	// summary a compaction stands for), so a later compaction can name its
	// first kept entry.
	IDs []string
	// Entries is every entry read, in file order, for transcripts.
	Entries []Entry
	// Warnings say what was skipped or repaired. Loading never fails on a
	// bad entry, only on a missing or unreadable header.
	Warnings []string
	// LastProvider and LastModel are those of the latest model_change on
	// the context's chain, if any.
	LastProvider, LastModel string
}

// Entry is one line of a session file after the header.
type Entry struct {
	Type      string
	ID        string
	ParentID  string // "" for a root
	Timestamp time.Time
	// Message is set for "message" entries, as decoded: pi's own roles
	// (custom, bashExecution…) keep their role here, and their own fields
	// go into Loaded.Messages as pi words them.
	Message *llm.Message
	Retried bool
	// Line is the entry's line number in the file, 1-based.
	Line int

	// details is what viewers show of entries other than plain messages
	// (see Details); nil for those, which are nearly all of a file.
	details *Details
}

// Details are the fields viewers show of an entry, read with its line
// (the line itself is not kept).
type Details struct {
	// Summary of a compaction or branch_summary, TokensBefore of a
	// compaction.
	Summary      string
	TokensBefore int
	// Provider and ModelID of a model_change.
	Provider, ModelID string
	// PiMessage is the message as written for pi's own roles
	// (bashExecution…), whose fields llm.Message has no place for.
	PiMessage json.RawMessage
	// Decision is what the session decided about a failed or aborted
	// call, and how a retry chain ended (on the answer after retries), as
	// the file recorded it (Loaded.EstimateDecisions fills in the rest).
	// It lives here, with the other rare fields, so that the entry of
	// every plain message stays as small as it was.
	Decision *Decision
}

// Decision returns the entry's Details().Decision: nil for most entries.
func (e *Entry) Decision() *Decision {
	if e.details == nil {
		return nil
	}
	return e.details.Decision
}

// Details returns the entry's details; all empty for a plain message.
func (e *Entry) Details() Details {
	if e.details == nil {
		return Details{}
	}
	return *e.details
}

// knownEntryType reports whether t is an entry type of pi's version 3.
func knownEntryType(t string) bool {
	switch t {
	case "message", "model_change", "thinking_level_change", "compaction",
		"branch_summary", "custom", "custom_message", "label", "session_info":
		return true
	}
	return false
}

// Pi's wording for summaries handed to the model as user messages
// (messages.ts, COMPACTION_SUMMARY_* and BRANCH_SUMMARY_*).
const (
	compactionPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	compactionSuffix = "\n</summary>"
	branchPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	branchSuffix     = "</summary>"
)

// SummaryText is the user message that a compaction summary stands in for
// in the model's context, worded as pi words it, so that either tool
// resumes the other's sessions.
func SummaryText(summary string) string { return compactionPrefix + summary + compactionSuffix }

// IsSummary reports that m is a compaction summary's message (SummaryText).
func IsSummary(m llm.Message) bool {
	t := m.TextOf()
	return m.Role == llm.User && strings.HasPrefix(t, compactionPrefix) && strings.HasSuffix(t, compactionSuffix)
}

// entryFields are the fields of every entry type that loading needs.
type entryFields struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ParentID  *string         `json:"parentId"`
	Timestamp string          `json:"timestamp"`
	Message   json.RawMessage `json:"message"`
	Retried   bool            `json:"retried"`
	Decision  *Decision       `json:"decision"`
	// compaction, branch_summary
	Summary             string   `json:"summary"`
	FirstKeptEntryID    string   `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *float64 `json:"firstKeptEntryIndex"` // version 1
	TokensBefore        int      `json:"tokensBefore"`
	// model_change
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	// session_info
	Name string `json:"name"`
	// custom_message
	Content json.RawMessage `json:"content"`
}

// readResult is what readJournal found, for Open to continue from.
type readResult struct {
	loaded *Loaded
	leaf   string
	ids    *idSet
	torn   bool
}

// journalReader holds the state of one read.
type journalReader struct {
	ld      *Loaded
	fields  map[int]*entryFields // by index in ld.Entries, what the context needs
	legacy  bool                 // version 1: entries have no ids
	skipped bool                 // a corrupt line was skipped
	dupIDs  bool                 // two entries have the same id (see chain)
	ids     *idBatch             // the ids read, for the set once the read is over (nil: not kept)
	scan    scanner              // one for every line: it keeps its buffer and names
}

func (r *journalReader) warn(line int, format string, args ...any) {
	r.ld.Warnings = append(r.ld.Warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// readJournal reads a whole session file from rd (named path in errors),
// a long one on every core (parallel.go).
func readJournal(rd io.Reader, path string) (*readResult, error) {
	return readJournalIn(rd, path, runtime.GOMAXPROCS(0), minPart)
}

// readJournalIn reads as readJournal does, in at most most parts of at
// least least bytes each when rd is a file (an io.ReaderAt).
func readJournalIn(rd io.Reader, path string, most int, least int64) (*readResult, error) {
	var lines int
	var cuts []cut
	if ra, ok := rd.(io.ReaderAt); ok {
		lines, cuts = lineCuts(ra, most, least)
	}
	return readCounted(rd, path, lines, cuts)
}

// readCounted reads rd given what lineCuts found of it: its line count
// (0: unknown) and the cuts of its parts after the first (which need rd
// to be an io.ReaderAt). Counts that no longer hold (a file rewritten
// since) cost the read its speed and the line numbers past a stale cut,
// not its entries.
func readCounted(rd io.Reader, path string, lines int, cuts []cut) (*readResult, error) {
	r := &journalReader{ld: &Loaded{}}
	res := &readResult{loaded: r.ld, ids: newIDSet(0)}
	var entries []Entry
	var msgs []llm.Message
	if lines > 0 {
		// Sized once, so neither grows by copying (garbage the size of
		// the file's structs) while the file is read.
		entries, msgs = make([]Entry, 0, lines), make([]llm.Message, 0, lines)
		r.ld.Entries, r.scan.msgs = entries, msgs
	}
	// The first part's reader stops at the first cut while the parts'
	// readers read the rest; lifting its limit makes it read on in one
	// pass instead.
	src := &io.LimitedReader{R: rd, N: noLimit}
	ra, _ := rd.(io.ReaderAt)
	if ra != nil {
		src.R = io.NewSectionReader(ra, 0, noLimit)
	}
	if len(cuts) > 0 {
		// Its header line has no entry, hence the region one short of
		// its lines (readParts).
		src.N = cuts[0].off
		r.ld.Entries, r.scan.msgs = entries[:0:cuts[0].line-2], msgs[:0:cuts[0].line-2]
	}
	r.ids = newIDBatch(cap(r.ld.Entries)) // one id a line of its region
	onePass := func() {
		src.N, cuts = noLimit, nil
		// Nothing was read into the slabs yet: all of them is this
		// pass's.
		r.ld.Entries, r.scan.msgs = entries, msgs
	}
	s := &lineScan{br: bufio.NewReaderSize(src, 64<<10)}
	line, _, ok, err := s.nextFilled()
	if err == nil && !ok && len(cuts) > 0 {
		onePass() // the first part was blank lines: the header is further on
		line, _, ok, err = s.nextFilled()
	}
	if err != nil {
		return nil, fmt.Errorf("journal: read %s: %w", path, err)
	}
	if err := r.headerLine(path, s, line, ok); err != nil {
		return nil, err
	}
	if r.legacy && len(cuts) > 0 {
		onePass() // a version 1 file chains its entries as it reads them
	}
	if len(cuts) > 0 {
		err = r.readWithParts(s, ra, path, cuts, res, entries, msgs)
	} else {
		err = r.readEntries(s, path)
		r.ids.done()
		r.dupIDs = res.ids.merge(r.ids)
	}
	if err != nil {
		return nil, err
	}
	r.ids = nil
	res.torn = res.torn || s.torn
	if k := len(r.ld.Entries); k > 0 {
		res.leaf = r.ld.Entries[k-1].ID
	}
	r.context()
	return res, nil
}

// noLimit is a length past the end of any file.
const noLimit = 1 << 62

// readEntries decodes each entry line of s into r, to the end of s.
func (r *journalReader) readEntries(s *lineScan, path string) error {
	for {
		line, complete, ok, err := s.nextFilled()
		if err != nil {
			return fmt.Errorf("journal: read %s: %w", path, err)
		}
		if !ok {
			return nil
		}
		r.entry(s.pos.Line, line, complete)
	}
}

func (r *journalReader) header(n int, line []byte) error {
	var h struct {
		Type    string          `json:"type"`
		Version *int            `json:"version"`
		ID      json.RawMessage `json:"id"`
		Cwd     string          `json:"cwd"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("no session header: %v", err)
	}
	if h.Type != "session" {
		return fmt.Errorf("no session header: first entry has type %q, want \"session\"", h.Type)
	}
	var id string
	if err := json.Unmarshal(h.ID, &id); err != nil || id == "" {
		return errors.New("session header has no id")
	}
	r.ld.ID, r.ld.Cwd = id, h.Cwd
	switch {
	case h.Version == nil || *h.Version < 2:
		r.legacy = true
	case *h.Version > journalVersion:
		r.warn(n, "format version %d is newer than %d; reading it as %d", *h.Version, journalVersion, journalVersion)
	}
	return nil
}

// entry decodes one entry line, adding its id to r.ids (if not nil). A
// bad line is skipped with a warning.
func (r *journalReader) entry(n int, line []byte, complete bool) {
	f, m, fast := r.scan.entry(line)
	if !fast {
		// encoding/json needs f on the heap: only for the lines it reads,
		// not for every line.
		slow := new(entryFields)
		if !r.decodeSlow(n, line, complete, slow) {
			r.skipped = true
			return
		}
		f = *slow
	}
	e := Entry{Type: f.Type, ID: f.ID, Retried: f.Retried, Line: n}
	if f.ParentID != nil {
		e.ParentID = *f.ParentID
		if fast {
			e.ParentID = r.keepParent(e.ParentID)
		}
		f.ParentID = nil // it may view the line's buffer, as f.Timestamp does
	}
	if t, ok := parseStamp(f.Timestamp); ok {
		e.Timestamp = t
	}
	f.Timestamp = "" // it may share the line's buffer, which the next line reuses
	if r.legacy {
		// Version 1 was a plain list: give each entry a stable id from its
		// line and chain it to the one before, as pi's migration does.
		if e.ID == "" {
			e.ID = "v1-" + strconv.Itoa(n)
		}
		e.ParentID = ""
		if k := len(r.ld.Entries); k > 0 {
			e.ParentID = r.ld.Entries[k-1].ID
		}
		// firstKeptEntryIndex counted the header as entry 0.
		if f.Type == "compaction" && f.FirstKeptEntryID == "" && f.FirstKeptEntryIndex != nil {
			if i := int(*f.FirstKeptEntryIndex) - 1; i >= 0 && i < len(r.ld.Entries) {
				f.FirstKeptEntryID = r.ld.Entries[i].ID
			}
		}
	}
	if e.ID == "" {
		r.warn(n, "%q entry without an id skipped", f.Type)
		r.skipped = true
		return
	}
	switch {
	case f.Type == "message":
		if m == nil {
			var ok bool
			if m, ok = r.decodeMessage(n, &f); !ok {
				r.skipped = true
				return
			}
		}
		if len(m.Content) == 0 {
			m.Content = nil // as a message built without content
		}
		e.Message = m
	case !knownEntryType(f.Type):
		// Kept in Entries: later entries may chain through it.
		r.warn(n, "unknown entry type %q left out of the context", f.Type)
	}
	// f.Message is left only for pi's own roles (decodeMessage).
	if f.Summary != "" || f.TokensBefore != 0 || f.Provider != "" || f.ModelID != "" || f.Message != nil || f.Decision != nil {
		e.details = &Details{Summary: f.Summary, TokensBefore: f.TokensBefore, Provider: f.Provider, ModelID: f.ModelID, PiMessage: f.Message, Decision: f.Decision}
	}
	if r.ids != nil {
		r.ids.add(e.ID)
	}
	r.ld.Entries = append(r.ld.Entries, e)
	if f.Type != "message" || f.Message != nil {
		// A plain message entry needs nothing beyond its Entry.
		if r.fields == nil {
			r.fields = map[int]*entryFields{}
		}
		kept := f
		r.fields[len(r.ld.Entries)-1] = &kept
	}
}

// keepParent returns a parent id the fast decoder read as a view of the
// line: the id of the entry above when it is that one (so it shares its
// bytes), else a copy.
func (r *journalReader) keepParent(p string) string {
	if k := len(r.ld.Entries); k > 0 && r.ld.Entries[k-1].ID == p {
		return r.ld.Entries[k-1].ID
	}
	return r.scan.arena.string(p)
}

// field returns the fields of entry i that the context needs.
func (r *journalReader) field(i int) *entryFields {
	if f := r.fields[i]; f != nil {
		return f
	}
	return &entryFields{}
}

// decodeSlow decodes an entry line with encoding/json, for the lines
// decodeEntry leaves to it, and words what is wrong with a bad one. It
// reports false for a line to skip.
func (r *journalReader) decodeSlow(n int, line []byte, complete bool, f *entryFields) bool {
	*f = entryFields{}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(line, f); errors.As(err, &typeErr) {
		// Valid JSON with an odd field (a fork's entry, say): the decoder
		// filled the other fields, so keep what can be kept.
		r.warn(n, "%v; rest of the entry kept", err)
	} else if err != nil {
		if !complete {
			r.warn(n, "torn last line skipped (the writer stopped mid-line): %v", err)
		} else {
			r.warn(n, "corrupt entry skipped: %v", err)
		}
		return false
	}
	return true
}

// decodeMessage decodes the message of an entry decodeSlow read.
func (r *journalReader) decodeMessage(n int, f *entryFields) (*llm.Message, bool) {
	if len(f.Message) == 0 || string(f.Message) == "null" {
		r.warn(n, "message entry without a message skipped")
		return nil, false
	}
	m := new(llm.Message)
	if err := json.Unmarshal(f.Message, m); err != nil {
		r.warn(n, "message entry skipped: %v", err)
		return nil, false
	}
	if plainRole(m.Role) {
		f.Message = nil // only pi's own roles need their own fields
	}
	return m, true
}

// context fills Messages, Name and the last model from the entries.
func (r *journalReader) context() {
	ld := r.ld
	// The name is the latest non-empty one anywhere in the file, as pi's
	// getSessionName reads it.
	for i := range ld.Entries {
		if ld.Entries[i].Type == "session_info" {
			if name := strings.TrimSpace(r.field(i).Name); name != "" {
				ld.Name = name
			}
		}
	}
	path := r.chain()
	if r.direct(path) {
		return
	}
	defer r.freeSlab()
	// At most one message per entry and the summary: Messages is never
	// reallocated, so entries can point into it (addContext).
	if len(path) > 0 {
		ld.Messages = make([]llm.Message, 0, len(path)+1)
		ld.IDs = make([]string, 0, len(path)+1)
	}
	comp := -1 // position in path of the latest compaction
	for p, i := range path {
		switch ld.Entries[i].Type {
		case "compaction":
			comp = p
		case "model_change":
			f := r.field(i)
			ld.LastProvider, ld.LastModel = f.Provider, f.ModelID
		}
	}
	if comp < 0 {
		for _, i := range path {
			r.addContext(i)
		}
		return
	}
	ci := path[comp]
	c := r.field(ci)
	r.push(llm.Message{
		Role:      llm.User,
		Content:   []llm.Content{llm.Text(SummaryText(c.Summary))},
		Timestamp: unixMilli(ld.Entries[ci].Timestamp),
	}, "")
	kept := false
	for _, i := range path[:comp] {
		kept = kept || ld.Entries[i].ID == c.FirstKeptEntryID
		if kept {
			r.addContext(i)
		}
	}
	if !kept && c.FirstKeptEntryID != "" {
		r.warn(ld.Entries[ci].Line, "compaction keeps from entry %q, which is not before it; nothing before the compaction is kept", c.FirstKeptEntryID)
	}
	for _, i := range path[comp+1:] {
		r.addContext(i)
	}
}

func (r *journalReader) push(m llm.Message, id string) {
	r.ld.Messages = append(r.ld.Messages, m)
	r.ld.IDs = append(r.ld.IDs, id)
}

// addContext appends what entry i contributes to the model's context.
func (r *journalReader) addContext(i int) {
	e, f := &r.ld.Entries[i], r.field(i)
	switch e.Type {
	case "message":
		if e.Retried {
			return
		}
		if m, ok := r.contextMessage(e, f); ok {
			r.push(m, e.ID)
			if m.Role == e.Message.Role {
				// Sent as decoded: the entry's message is the context's,
				// one decoded form instead of two.
				e.Message = &r.ld.Messages[len(r.ld.Messages)-1]
			}
		}
	case "custom_message":
		m := llm.Message{Role: llm.User, Timestamp: unixMilli(e.Timestamp)}
		// Decoded as a user message's content: a string or a block list.
		if len(f.Content) > 0 {
			var u llm.Message
			if err := json.Unmarshal(append(append([]byte(`{"content":`), f.Content...), '}'), &u); err != nil {
				r.warn(e.Line, "custom_message content left out: %v", err)
				return
			}
			m.Content = u.Content
		}
		r.push(m, e.ID)
	case "branch_summary":
		if f.Summary != "" {
			r.push(llm.Message{
				Role:      llm.User,
				Content:   []llm.Content{llm.Text(branchPrefix + f.Summary + branchSuffix)},
				Timestamp: unixMilli(e.Timestamp),
			}, e.ID)
		}
	}
}

// contextMessage turns a message entry into what the model is sent, the
// way pi's convertToLlm does for its own roles.
func (r *journalReader) contextMessage(e *Entry, f *entryFields) (llm.Message, bool) {
	m := *e.Message
	switch m.Role {
	case llm.User, llm.Assistant, llm.ToolResult:
		return m, true
	case "custom", "hookMessage": // hookMessage: the same, before version 3
		return llm.Message{Role: llm.User, Content: m.Content, Timestamp: m.Timestamp}, true
	case "compactionSummary", "branchSummary":
		var s struct {
			Summary string `json:"summary"`
		}
		json.Unmarshal(f.Message, &s)
		text := SummaryText(s.Summary)
		if m.Role == "branchSummary" {
			text = branchPrefix + s.Summary + branchSuffix
		}
		return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}, Timestamp: m.Timestamp}, true
	case "bashExecution":
		var b struct {
			Command            string   `json:"command"`
			Output             string   `json:"output"`
			ExitCode           *float64 `json:"exitCode"`
			Cancelled          bool     `json:"cancelled"`
			Truncated          bool     `json:"truncated"`
			FullOutputPath     string   `json:"fullOutputPath"`
			ExcludeFromContext bool     `json:"excludeFromContext"`
		}
		if err := json.Unmarshal(f.Message, &b); err != nil {
			r.warn(e.Line, "bashExecution message left out: %v", err)
			return m, false
		}
		if b.ExcludeFromContext {
			return m, false
		}
		return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(bashText(b.Command, b.Output, b.ExitCode, b.Cancelled, b.Truncated, b.FullOutputPath))}, Timestamp: m.Timestamp}, true
	default:
		r.warn(e.Line, "message role %q left out of the context", m.Role)
		return m, false
	}
}

// bashText renders a command the user ran in pi (its "!" prefix) the way
// pi shows it to the model.
func bashText(cmd, out string, exit *float64, cancelled, truncated bool, full string) string {
	var sb strings.Builder
	sb.WriteString("Ran `" + cmd + "`\n")
	if out != "" {
		sb.WriteString("```\n" + out + "\n```")
	} else {
		sb.WriteString("(no output)")
	}
	switch {
	case cancelled:
		sb.WriteString("\n\n(command cancelled)")
	case exit != nil && *exit != 0:
		sb.WriteString("\n\nCommand exited with code " + strconv.FormatFloat(*exit, 'f', -1, 64))
	}
	if truncated && full != "" {
		sb.WriteString("\n\n[Output truncated. Full output: " + full + "]")
	}
	return sb.String()
}

// unixMilli is a message timestamp for an entry time; 0 when the entry had
// none that parsed.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
