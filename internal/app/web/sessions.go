package web

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Kinds of transcript entries.
const (
	kindUser        = "user"
	kindAssistant   = "assistant"
	kindToolResult  = "toolResult"
	kindCompaction  = "compaction"
	kindModelChange = "modelChange"
	kindNote        = "note" // anything else the file holds: labels, custom entries
)

// sessionInfo is one row of the sessions page.
type sessionInfo struct {
	Name  string // the file name, which is also the page's URL key
	ID    string
	Title string // the session's name, else the start of its first prompt
	// Start and End are the times of the first and the last entry.
	Start, End time.Time
	Model      string // provider/model of the last model call
	Messages   int    // message entries, retried ones not counted
	Calls      int    // model calls: assistant messages, retried ones counted
	Retries    int    // failed model calls that a retry replaced
	Compacted  int    // context overflows handed to compaction
	Cancelled  int    // failed model calls whose retry the user cancelled
	Failed     int    // other failed model calls, not retried
	Err        string // why the file could not be read, if it could not
}

// CallSummary counts the model calls and how they failed, in words
// that match the timeline's red bars: every failed call is one, however
// it ended. "4 model calls · 1 failed and retried · 1 overflowed, handed
// to compaction · 1 failed, not retried".
func (s sessionInfo) CallSummary() string {
	out := fmt.Sprintf("%d model calls", s.Calls)
	if s.Calls == 1 {
		out = "1 model call"
	}
	if s.Retries > 0 {
		out += fmt.Sprintf(" · %d failed and retried", s.Retries)
	}
	if s.Compacted > 0 {
		out += fmt.Sprintf(" · %d overflowed, handed to compaction", s.Compacted)
	}
	if s.Cancelled > 0 {
		out += fmt.Sprintf(" · %d failed, retry cancelled", s.Cancelled)
	}
	if s.Failed > 0 {
		out += fmt.Sprintf(" · %d failed, not retried", s.Failed)
	}
	if s.Retries+s.Compacted+s.Cancelled+s.Failed == 0 && s.Calls > 0 {
		out += " · none failed"
	}
	return out
}

// Duration is the time from the first to the last entry.
func (s sessionInfo) Duration() time.Duration {
	if s.Start.IsZero() || s.End.Before(s.Start) {
		return 0
	}
	return s.End.Sub(s.Start)
}

// sessionView is one session as the transcript page shows it.
type sessionView struct {
	sessionInfo
	Entries  []entryView
	Warnings []string
}

// entryView is one entry of a session file.
type entryView struct {
	ID, Type, Kind string
	// Start is when a message began (its own timestamp: for a model call
	// the moment the request went out) and End when its entry was written.
	Start, End time.Time
	Retried    bool
	Role       string // a message role other than the three of llm
	Blocks     []block
	// Assistant messages.
	Model, Provider, StopReason, Error string
	TokensIn, TokensOut                int
	// What rally decided about a failed or aborted call, as its file
	// recorded it (Estimated: worked out on load for a file that did not):
	// the retry it led to, the wait, the class, the policy's reason, a
	// switch, and ChainEnd, how the retry chain ended here ("" while it
	// goes on).
	Decided, Estimated bool
	Attempt            int
	DelayMs            int64
	Class, Reason      string
	ChainEnd           string
	SwitchedTo         string
	// Tool results.
	ToolName string
	IsError  bool
	// Compactions and summaries.
	Text         string
	TokensBefore int

	// What the transcript shows, worked out once by prepare so that the
	// template reads fields rather than calling functions, which a page
	// of 10,000 entries notices.
	CSS, Who, When, Took, ErrClass       string
	Badge, Outcome                       string // the transcript's badge; what became of a failed call
	Compaction, ModelChange, Note, Abort bool
}

// block is one content block of a message.
type block struct {
	Kind string // text, thinking, toolCall, image
	Name string // the tool of a toolCall
	Text string // the text, thinking, arguments, or an image's MIME type
	// Set by prepare, for the template. Long text (a tool's output) is
	// folded, with its line count on the fold.
	IsText, IsThinking, IsToolCall bool
	Lines                          int
	Long                           bool
}

// foldLines is how many lines of text show unfolded.
const foldLines = 15

// Failed reports a model call that ended in an error.
func (e *entryView) Failed() bool { return e.Kind == kindAssistant && e.StopReason == "error" }

// prepare works out what the transcript shows of e.
func (e *entryView) prepare() {
	e.CSS = "entry " + e.Kind
	if e.Retried {
		e.CSS += " retried"
	}
	switch e.Kind {
	case kindUser:
		e.Who = "User"
		if e.Role != "" {
			e.Who = "User (" + e.Role + ")" // pi's custom and bashExecution messages
		}
	case kindAssistant:
		e.Who = "Assistant"
	case kindToolResult:
		e.Who = "Tool result: " + e.ToolName
	case kindCompaction:
		e.Who = "Compaction"
	case kindModelChange:
		e.Who = "Model change"
	default:
		e.Who = e.Type
	}
	e.When = clock(e.End)
	if e.Kind == kindAssistant {
		e.setCall(e.Start, e.End)
	}
	if e.Failed() {
		e.CSS += " failed"
		e.ErrClass = e.Class
		if e.ErrClass == "" {
			e.ErrClass = "failed"
		}
	}
	e.Badge, e.Outcome = e.outcome()
	e.Compaction, e.ModelChange, e.Note = e.Kind == kindCompaction, e.Kind == kindModelChange, e.Kind == kindNote
	e.Abort = e.StopReason == "aborted"
	for i := range e.Blocks {
		b := &e.Blocks[i]
		b.IsText, b.IsThinking, b.IsToolCall = b.Kind == "text", b.Kind == "thinking", b.Kind == "toolCall"
		if b.IsText {
			b.Lines = strings.Count(b.Text, "\n") + 1
			b.Long = b.Lines > foldLines
		}
	}
}

// retriedCall reports a failed call that a retry replaced after a wait
// (or a switch), as opposed to an overflow handed to compaction.
func (e *entryView) retriedCall() bool { return e.Failed() && e.Retried && e.ChainEnd == "" }

// outcome words what became of a failed or aborted call: the badge of its
// transcript entry and the note of its line in the failure list.
func (e *entryView) outcome() (badge, note string) {
	est := ""
	if e.Estimated {
		est = "; estimated: the file does not record it"
	}
	switch {
	case e.Kind != kindAssistant || !e.Decided:
		return "", ""
	case e.retriedCall():
		note = fmt.Sprintf("retry %d after %s", e.Attempt, dur(time.Duration(e.DelayMs)*time.Millisecond))
		if e.SwitchedTo != "" {
			note += ", switched to " + e.SwitchedTo
		}
		return "failed, retried", note + est
	case e.ChainEnd == "compaction":
		return "overflow, compacted", "handed to compaction" + est
	case e.ChainEnd == "cancelled" && e.Failed():
		return "failed, retry cancelled", "retry cancelled" + est
	case e.ChainEnd == "exhausted":
		return "failed, retries exhausted", fmt.Sprintf("gave up after %d retries", e.Attempt) + est
	case e.Failed():
		note = "not retried"
		if e.Reason != "" {
			note += ": " + e.Reason
		}
		return "", note + est
	}
	return "", ""
}

// setCall says when a model call ended and how long it took; the
// timeline corrects it where the entry's own times mislead (a retried
// failure is written after its wait).
func (e *entryView) setCall(start, end time.Time) {
	e.When = clock(end)
	took := time.Duration(0)
	if !start.IsZero() && !end.Before(start) {
		took = end.Sub(start)
	}
	e.Took = dur(took)
	if e.TokensOut > 0 {
		e.Took += fmt.Sprintf(" · %d in / %d out", e.TokensIn, e.TokensOut)
	}
}

// count adds entry e to the sessionInfo of v, and prepares it for the
// transcript. Entries come one at a time, in file order (scanSession).
func (v *sessionView) count(e *entryView) {
	e.prepare()
	if !e.End.IsZero() {
		if v.Start.IsZero() {
			v.Start = e.End
		}
		v.End = e.End
	}
	if e.Type != "message" {
		return
	}
	if e.Kind == kindUser && v.Title == "" {
		v.Title = firstLine(e.Blocks)
	}
	if e.Kind == kindAssistant {
		v.Calls++
		if e.Model != "" {
			v.Model = e.Model
		}
	}
	switch {
	case e.retriedCall():
		v.Retries++
	case !e.Failed():
	case e.ChainEnd == "compaction":
		v.Compacted++
	case e.ChainEnd == "cancelled":
		v.Cancelled++
	default:
		v.Failed++
	}
	if !e.Retried { // a retried entry is out of the context
		v.Messages++
	}
}

// firstLine returns the start of the first text block, for a title.
func firstLine(bs []block) string {
	for _, b := range bs {
		if b.Kind == "text" && strings.TrimSpace(b.Text) != "" {
			s, _, _ := strings.Cut(strings.TrimSpace(b.Text), "\n")
			if r := []rune(s); len(r) > 80 {
				s = string(r[:79]) + "…"
			}
			return s
		}
	}
	return ""
}

// summaries lists the sessions of a directory, reading each file once per
// change: a file's summary is kept while its size and modification time
// stay the same.
type summaries struct {
	dir   string
	keys  []string // hidden in what is shown (loadSession)
	loads limiter  // shared with the session views
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	file sessionFile
	info sessionInfo
}

func newSummaries(dir string, keys []string) *summaries {
	return &summaries{dir: dir, keys: keys, loads: newLimiter(maxLoads), cache: map[string]cached{}}
}

// list returns the sessions from index from (newest first) up to but not
// including to, and how many there are in all; to < 0 means all of them.
// Files are read in parallel; the context stops the reading early when the
// client has gone.
func (s *summaries) list(ctx context.Context, from, to int) ([]sessionInfo, int, error) {
	all, err := listSessionFiles(s.dir)
	if err != nil {
		return nil, 0, err
	}
	if to < 0 || to > len(all) {
		to = len(all)
	}
	from = min(max(from, 0), to)
	files := all[from:to]
	out := make([]sessionInfo, len(files))
	var todo []int
	s.mu.Lock()
	for i, f := range files {
		if c, ok := s.cache[f.Name]; ok && c.file == f {
			out[i] = c.info
		} else {
			todo = append(todo, i)
		}
	}
	s.mu.Unlock()

	next := make(chan int)
	var wg sync.WaitGroup
	for range min(maxLoads, len(todo)) {
		wg.Go(func() {
			for i := range next {
				out[i] = s.read(ctx, files[i])
			}
		})
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	live := make(map[string]cached, len(s.cache)+len(files))
	for _, f := range all { // forget removed and changed files
		if c, ok := s.cache[f.Name]; ok && c.file == f {
			live[f.Name] = c
		}
	}
	for i, f := range files {
		live[f.Name] = cached{f, out[i]}
	}
	s.cache = live
	return out, len(all), nil
}

func (s *summaries) read(ctx context.Context, f sessionFile) sessionInfo {
	release, err := s.loads.acquire(ctx)
	if err != nil {
		return sessionInfo{Name: f.Name, Err: err.Error()}
	}
	defer release()
	v, _, _, err := scanSession(ctx, s.dir, f.Name, s.keys)
	if err != nil {
		return sessionInfo{Name: f.Name, Err: err.Error()}
	}
	return v.sessionInfo
}
