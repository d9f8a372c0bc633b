// Package journal is rally's session file: the pi coding
// agent's session format, version 3, written by Create and Open and read
// by Load (for viewers: nothing is opened for writing), Latest and List.
package journal

// The journal is rally's session file. It follows the pi coding agent's
// session format, version 3, so pi and the tools written for it read rally's
// sessions and rally resumes pi's. Facts relied on, from badlogic/pi-mono:
//
//   - packages/coding-agent/src/core/session-manager.ts (CURRENT_SESSION_VERSION,
//     the entry interfaces, generateId, getDefaultSessionDir, newSession,
//     buildSessionContext, the v1→v2→v3 migrations, getSessionName)
//   - packages/coding-agent/docs/session.md (the documented line shapes)
//   - packages/coding-agent/src/core/messages.ts (how compaction and branch
//     summaries, custom and bashExecution messages become user messages)
//
// The file is JSON lines. Line 1 is a header that is not part of the entry
// tree: {"type":"session","version":3,"id":<uuid>,"timestamp":<ISO>,"cwd":…,
// "parentSession"?}. Every later line is an entry {"type","id","parentId",
// "timestamp",…}: id is 8 lowercase hex characters (pi takes the head of a
// random UUID and retries on a collision), parentId is the previous entry's
// id or null for the first, and timestamp is an ISO-8601 UTC string with
// milliseconds (JavaScript's toISOString), while the message objects inside
// carry Unix milliseconds. Entry types: message {message},
// model_change {provider, modelId}, thinking_level_change {thinkingLevel},
// compaction {summary, firstKeptEntryId, tokensBefore, details?, fromHook?},
// branch_summary {fromId, summary}, custom {customType, data} (never sent to
// the model), custom_message {customType, content, display, details} (sent
// as a user message), label {targetId, label}, session_info {name}.
// The file is <sessions>/--<cwd, leading separator dropped, / \ : → ->--/
// <header timestamp with : and . → ->_<uuid>.jsonl. Version 1 files had no
// ids (a plain list; compaction said firstKeptEntryIndex) and version 2 used
// the message role "hookMessage" for what version 3 calls "custom".
//
// rally adds two fields pi does not know and ignores: "retried": true on a
// message entry whose failed assistant message a retry replaced, and
// "decision" {attempt, delayMs, class, reason, switchedTo, end} on a failed
// call and on the answer that ends a retry chain (see Decision).
//
// Durability: every append is one write(2) of a whole line on an O_APPEND
// descriptor, so a crash of the process (even SIGKILL) loses at most the line
// being written, and a torn line is skipped with a warning on load. A write
// that fails part-way (a full disk) is taken back (ftruncate to the end of
// the last whole line), and Open drops a torn last line a crash left, so
// the next entry always starts a line of its own and no torn line is ever
// left in the middle of the file. There is no fsync per line: it would cost
// milliseconds per message on many disks, and a power cut losing the last
// seconds of a transcript is an acceptable trade for an interactive tool.
// Close syncs.
//
// One writer: Create and Open take an exclusive flock(2) on the file for
// as long as the Journal is open, so two rally processes never append to
// one session (which would fork its entry chain); the second Open fails
// with ErrLocked. The kernel drops the lock when the process dies. Load,
// for viewers, takes no lock.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rally-agent/rally/internal/filelock"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rally-agent/rally/llm"
)

// journalVersion is the pi session format version rally writes.
const journalVersion = 3

// isoLayout is JavaScript's Date.toISOString, the entry timestamp format.
const isoLayout = "2006-01-02T15:04:05.000Z"

// fileTimePattern is the shape of a session file name's time: isoLayout
// with ':' and '.' replaced by '-', as pi names its files ('9' is a digit).
// Fixed width and UTC, so names sort in time order.
const fileTimePattern = "9999-99-99T99-99-99-999Z"

// fileTime returns the file name form of an ISO timestamp.
func fileTime(iso string) string { return strings.NewReplacer(":", "-", ".", "-").Replace(iso) }

// ErrLocked is the error (wrapped) of Open for a session file that another
// Journal, in this process or another, has open for writing.
var ErrLocked = errors.New("the session is open in another rally process")

// file is what a Journal writes: an *os.File, or in tests one that fails
// as a full disk does.
type file interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

// Journal is an append-only session file. Safe for concurrent use.
type Journal struct {
	path string
	id   string

	mu   sync.Mutex
	f    file   // nil once closed
	size int64  // where the next line starts: the end of the last whole line
	leaf string // id of the last entry, the parent of the next one
	// ids holds every entry id of the file, so a new one never collides.
	ids *idSet
	// torn is set when the file may not end in "\n" (a torn last line or a
	// short write): the next line then starts with one, so the torn bytes
	// stay a line of their own and never corrupt the next entry.
	torn bool
	// redact, when set, rewrites each entry's fields before they are
	// written (SetRedact).
	redact func(string) string
}

// SetRedact makes every entry written from now on pass through f first,
// as its JSON: the CLI hides API keys typed into a prompt or echoed in an
// answer, so they never reach the file. f must keep the JSON valid (the
// redact package replaces runs of key characters only). Call it before
// the Journal is shared.
func (j *Journal) SetRedact(f func(string) string) { j.redact = f }

// journalHeader is the first line of a session file.
type journalHeader struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	Timestamp     string `json:"timestamp"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession,omitempty"`
}

// entryHead is the part every entry shares, written first as pi does.
type entryHead struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
}

// Dir returns $RALLY_HOME/sessions/<cwd slug> for a home directory and
// working directory. The slug is pi's: the absolute cwd without its leading
// separator, with '/', '\' and ':' turned into '-', between "--" and "--",
// so "/home/me/proj" gives "--home-me-proj--".
func Dir(home, cwd string) string {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	return filepath.Join(home, "sessions", cwdSlug(cwd))
}

func cwdSlug(cwd string) string {
	if cwd != "" && (cwd[0] == '/' || cwd[0] == '\\') {
		cwd = cwd[1:]
	}
	return "--" + strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(cwd) + "--"
}

// Create creates <dir>/<time>_<id>.jsonl and writes its header at once,
// so even a session that ends before its first message is a valid file.
// dir is created with mode 0700 and the file with 0600: sessions hold
// prompts, code and tool output.
func Create(dir, cwd string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	ts := time.Now().UTC().Format(isoLayout)
	id := newSessionID()
	return create(filepath.Join(dir, fileTime(ts)+"_"+id+".jsonl"), id, ts, cwd)
}

// CreateAt is Create for a path the user named (rally --session FILE):
// it creates the file and its directory, and fails if the file exists.
func CreateAt(path, cwd string) (*Journal, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return create(path, newSessionID(), time.Now().UTC().Format(isoLayout), cwd)
}

func create(path, id, ts, cwd string) (*Journal, error) {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	line, err := json.Marshal(journalHeader{
		Type: "session", Version: journalVersion, ID: id, Timestamp: ts, Cwd: cwd,
	})
	if err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	// O_EXCL: a name collision must never append to someone else's session.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	// Locked before the header is written: an Open that finds the file
	// (rally -c picks the newest) gets ErrLocked, never a file without one.
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	line = append(line, '\n')
	if _, err := f.Write(line); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("journal: write %s: %w", path, err)
	}
	return &Journal{path: path, id: id, f: f, size: int64(len(line)), ids: newIDSet(0)}, nil
}

// lock takes the one-writer lock of a session file (internal/filelock's
// TryLock): ErrLocked while another rally process writes it. The lock
// belongs to the open file, so Close releases it and a crashed rally never
// leaves a session locked.
func lock(f *os.File) error {
	err := filelock.TryLock(f)
	if errors.Is(err, filelock.ErrHeld) {
		return ErrLocked
	}
	return err
}

// Open opens an existing session file for appending and returns what
// it holds. New entries continue the chain from the last entry read.
func Open(path string) (*Journal, *Loaded, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	// One descriptor for both: reads start at offset 0, and O_APPEND sends
	// every write to the end whatever the read offset.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	// Locked before reading: what is read is what this writer continues.
	if err := lock(f); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	r, err := readJournal(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	j := &Journal{path: path, id: r.loaded.ID, f: f, leaf: r.leaf, ids: r.ids, torn: r.torn}
	if j.size, err = endOfLines(f, r.torn); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	return j, r.loaded, nil
}

// endOfLines returns the size of f, after dropping a torn last line (one
// without its "\n" that is not a whole JSON value, which loading skipped):
// the next append then starts a line of its own at the end of the last
// whole one. A last line that parses without its "\n" (a writer that does
// not end the file with one) is kept; the next append starts with "\n".
func endOfLines(f *os.File, torn bool) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if !torn {
		return size, nil
	}
	cut, err := afterLastNewline(f, size)
	if err != nil {
		return 0, err
	}
	tail, err := io.ReadAll(io.NewSectionReader(f, cut, size-cut))
	if err != nil {
		return 0, err
	}
	if json.Valid(tail) {
		return size, nil
	}
	return cut, f.Truncate(cut)
}

// afterLastNewline returns the offset just after the last "\n" in the
// first size bytes of f (0 if there is none), reading backwards.
func afterLastNewline(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// Load reads a session file without opening it for writing, for viewers
// such as the web console.
func Load(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	r, err := readJournal(f, path)
	if err != nil {
		return nil, err
	}
	return r.loaded, nil
}

// Latest returns the newest session file in dir, or an error wrapping
// fs.ErrNotExist when there is none. Newest is by name: names start with
// the creation time in a fixed-width UTC form, so their order is time order
// and no file needs opening. Names not of that form are not sessions.
// The directory is read in batches, keeping only the best name so far.
func Latest(dir string) (string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	defer d.Close()
	best := ""
	for {
		des, err := d.ReadDir(256)
		for _, de := range des {
			if n := de.Name(); !de.IsDir() && isSessionName(n) && n > best {
				best = n
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("journal: %w", err)
		}
	}
	if best == "" {
		return "", fmt.Errorf("journal: no session in %s: %w", dir, fs.ErrNotExist)
	}
	return filepath.Join(dir, best), nil
}

// List returns the session files in dir, newest first (by name, as
// Latest), for a viewer to list; a missing dir has none.
func List(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []string
	for i := len(des) - 1; i >= 0; i-- { // ReadDir sorts by name
		if n := des[i].Name(); !des[i].IsDir() && isSessionName(n) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

// isSessionName reports whether name looks like <file time>_<id>.jsonl.
func isSessionName(name string) bool {
	n := len(fileTimePattern)
	if len(name) <= n+1+len(".jsonl") || name[n] != '_' || !strings.HasSuffix(name, ".jsonl") {
		return false
	}
	for i := range n {
		c, p := name[i], fileTimePattern[i]
		if p == '9' && (c < '0' || c > '9') || p != '9' && c != p {
			return false
		}
	}
	return true
}

// Path returns the session file's absolute path.
func (j *Journal) Path() string { return j.path }

// ID returns the session id of the header.
func (j *Journal) ID() string { return j.id }

// AppendMessage writes a message entry and returns its entry id. retried
// marks a failed assistant message that a retry replaced: it stays in the
// transcript but is not sent to the model when the session is resumed.
// The message is written as given (its timestamp included).
func (j *Journal) AppendMessage(m llm.Message, retried bool) (string, error) {
	return j.AppendDecided(m, retried, nil)
}

// AppendDecided is AppendMessage with what the session decided about the
// call (nil: nothing to say, as for a plain message).
func (j *Journal) AppendDecided(m llm.Message, retried bool, d *Decision) (string, error) {
	return j.append("message", struct {
		Message  llm.Message `json:"message"`
		Retried  bool        `json:"retried,omitempty"`
		Decision *Decision   `json:"decision,omitempty"`
	}{m, retried, d})
}

// AppendModelChange records a switch of model.
func (j *Journal) AppendModelChange(provider, modelID string) error {
	_, err := j.append("model_change", struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	}{provider, modelID})
	return err
}

// AppendCompaction writes a compaction entry: the summary of what came
// before, the id of the first entry kept whole, and the context size in
// tokens before compaction. at is its timestamp (to the millisecond, as
// written): the caller's, so the summary message it builds has the one
// a resumed session will read.
func (j *Journal) AppendCompaction(summary, firstKeptID string, tokensBefore int, at time.Time) error {
	_, err := j.appendAt("compaction", at, struct {
		Summary      string `json:"summary"`
		FirstKeptID  string `json:"firstKeptEntryId"`
		TokensBefore int    `json:"tokensBefore"`
	}{summary, firstKeptID, tokensBefore})
	return err
}

// SetName names the session with a session_info entry, as pi's /name does;
// the latest one wins. pi cannot clear a name either, so an empty one is
// refused rather than silently ignored on the next load.
func (j *Journal) SetName(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return errors.New("journal: empty session name")
	}
	_, err := j.append("session_info", struct {
		Name string `json:"name"`
	}{name})
	return err
}

// Close syncs and closes the file. Appends after Close fail; a second Close
// does nothing.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	serr := j.f.Sync()
	cerr := j.f.Close()
	j.f = nil
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("journal: close %s: %w", j.path, err)
	}
	return nil
}

// append writes one entry of type typ whose own fields are those of body (a
// struct marshalling to a JSON object) and returns its id.
func (j *Journal) append(typ string, body any) (string, error) {
	return j.appendAt(typ, time.Time{}, body)
}

// appendAt is append with the entry's timestamp; zero means now.
func (j *Journal) appendAt(typ string, at time.Time, body any) (string, error) {
	// Marshal the body, the large part, before taking the lock.
	b, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("journal: append to %s: %w", j.path, err)
	}
	if j.redact != nil {
		b = []byte(j.redact(string(b)))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return "", fmt.Errorf("journal: append to %s: %w", j.path, os.ErrClosed)
	}
	// The id, parent and time are taken under the lock so the chain and the
	// timestamps follow the order of the lines in the file (a given time
	// is taken just before the call).
	id := newEntryID(j.ids)
	if at.IsZero() {
		at = time.Now()
	}
	h := entryHead{Type: typ, ID: id, Timestamp: at.UTC().Format(isoLayout)}
	if j.leaf != "" {
		parent := j.leaf
		h.ParentID = &parent
	}
	head, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("journal: append to %s: %w", j.path, err)
	}
	line := make([]byte, 0, len(head)+len(b)+2)
	if j.torn {
		line = append(line, '\n')
	}
	line = append(line, head[:len(head)-1]...) // drop the closing brace
	if len(b) > 2 {                            // body is not "{}"
		line = append(line, ',')
		line = append(line, b[1:]...)
	} else {
		line = append(line, '}')
	}
	line = append(line, '\n')
	// One write of the whole line: the unit that a crash can tear.
	n, err := j.f.Write(line)
	if err != nil {
		// A full disk or a failing device. Take the part written back, so
		// the file still ends with a whole line; if even that fails, the
		// next line starts with "\n" and leaves the torn bytes on a line
		// of their own, which loading skips with a warning.
		if n > 0 {
			if terr := j.f.Truncate(j.size); terr != nil {
				j.size += int64(n)
				j.torn = true
			}
		}
		return "", fmt.Errorf("journal: append to %s: %w", j.path, err)
	}
	j.size += int64(n)
	j.torn = false
	j.ids.add(id)
	j.leaf = id
	return id, nil
}

// newEntryID returns 8 random hex characters not in used, as pi's ids are.
// With 32 bits a collision is rare even in long sessions; after 100 of them
// in a row (which cannot really happen) a full UUID is used, as pi does.
func newEntryID(used *idSet) string {
	var b [4]byte
	for range 100 {
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		if !used.has(id) {
			return id
		}
	}
	return newSessionID()
}

// newSessionID returns a random (version 4) UUID, pi's session id form.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
