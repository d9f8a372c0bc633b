package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// RawEntry is one entry line of a session file as it was written, with
// the fields of its place in the tree. Clients that show a session's whole
// history (RPC get_entries and get_tree) get the line itself, so fields
// rally does not know (pi's, an extension's) reach them unchanged.
type RawEntry struct {
	ID, ParentID, Type string
	JSON               json.RawMessage
}

// ReadEntries reads every entry of the session file at path in file order
// (the header is not an entry). A line that is not a JSON object with an
// id is skipped, as Load skips it.
func ReadEntries(path string) ([]RawEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: read entries: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var out []RawEntry
	var buf []byte
	for n := 1; ; n++ {
		line, complete, err := readJournalLine(br, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("journal: read entries: %s: %w", path, err)
		}
		if n > 1 && complete {
			var head struct {
				Type     string  `json:"type"`
				ID       string  `json:"id"`
				ParentID *string `json:"parentId"`
			}
			if json.Unmarshal(line, &head) == nil && head.ID != "" {
				e := RawEntry{ID: head.ID, Type: head.Type, JSON: json.RawMessage(bytes.Clone(line))}
				if head.ParentID != nil {
					e.ParentID = *head.ParentID
				}
				out = append(out, e)
			}
		}
		if err != nil { // io.EOF
			return out, nil
		}
	}
}

// Leaf is the id of the entry the session continues from: the last one
// in the file, or "" for a session without entries.
func Leaf(es []RawEntry) string {
	if len(es) == 0 {
		return ""
	}
	return es[len(es)-1].ID
}

// Branch writes a new session file beside the one at path, holding the
// chain of entries from the root to leafID ("" for none), ids kept, with
// a header that names path as its parentSession, as pi's fork and clone
// do. It returns the new file's path; the original is not changed.
func Branch(path, leafID, cwd string) (string, error) {
	es, err := ReadEntries(path)
	if err != nil {
		return "", err
	}
	chain, err := chainTo(es, leafID)
	if err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ts := time.Now().UTC().Format(isoLayout)
	id := newSessionID()
	hdr, err := json.Marshal(journalHeader{
		Type: "session", Version: journalVersion, ID: id, Timestamp: ts, Cwd: cwd, ParentSession: path,
	})
	if err != nil {
		return "", fmt.Errorf("journal: branch: %w", err)
	}
	var b bytes.Buffer
	b.Write(hdr)
	b.WriteByte('\n')
	for _, e := range chain {
		b.Write(e.JSON)
		b.WriteByte('\n')
	}
	out := filepath.Join(filepath.Dir(path), fileTime(ts)+"_"+id+".jsonl")
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("journal: branch: %w", err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		os.Remove(out)
		return "", fmt.Errorf("journal: branch: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(out)
		return "", fmt.Errorf("journal: branch: %w", err)
	}
	return out, nil
}

// chainTo returns the entries from the root to leafID along parentId.
func chainTo(es []RawEntry, leafID string) ([]RawEntry, error) {
	if leafID == "" {
		return nil, nil
	}
	byID := make(map[string]int, len(es))
	for i, e := range es {
		byID[e.ID] = i
	}
	i, ok := byID[leafID]
	if !ok {
		return nil, fmt.Errorf("journal: branch: no entry %q", leafID)
	}
	var chain []RawEntry
	seen := map[string]bool{}
	for {
		e := es[i]
		if seen[e.ID] {
			return nil, fmt.Errorf("journal: branch: entry %q is its own ancestor", e.ID)
		}
		seen[e.ID] = true
		chain = append(chain, e)
		if e.ParentID == "" {
			break
		}
		if i, ok = byID[e.ParentID]; !ok {
			break // a lost parent: the chain starts here, as Load reads it
		}
	}
	for a, b := 0, len(chain)-1; a < b; a, b = a+1, b-1 {
		chain[a], chain[b] = chain[b], chain[a]
	}
	return chain, nil
}

// BashText is how the output of a command the user ran reaches the model:
// the user message pi sends for its bashExecution messages. exit is nil
// when the command did not exit (cancelled); fullPath names the whole
// output when it was truncated.
func BashText(cmd, out string, exit *int, cancelled, truncated bool, fullPath string) string {
	var e *float64
	if exit != nil {
		f := float64(*exit)
		e = &f
	}
	return bashText(cmd, out, e, cancelled, truncated, fullPath)
}
