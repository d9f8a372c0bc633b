// Package unclassified keeps the failed model calls that no rule of the
// classifier recognised (retry.Signal.Fallback: only the text fallback or
// the Fatal default decided), so that a user who meets a new kind of error
// can report it in one paste: `rally classify --unclassified` prints them
// in the corpus format of retry/testdata.
//
// File keeps them in $RALLY_HOME/unclassified.jsonl, one JSON object a
// line, each distinct error once (by provider, status and body), its body
// redacted of keys by internal/redact, the one redactor. Headers are not
// kept: they carry credentials more often than causes.
package unclassified

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rally-agent/rally/internal/filelock"
	"github.com/rally-agent/rally/internal/redact"
	"github.com/rally-agent/rally/retry"
)

// Entry is one unrecognised failure.
type Entry struct {
	// At is when it was first seen.
	At       time.Time `json:"at"`
	Provider string    `json:"provider,omitempty"`
	Status   int       `json:"status,omitempty"`
	// Body is the response body or error text, redacted and cut to MaxBody.
	Body string `json:"body"`
	// Class and Reason are what the fallback decided.
	Class  retry.Class `json:"class"`
	Reason string      `json:"reason,omitempty"`
}

const (
	// MaxBody bounds a kept body; an error's cause is in its first
	// kilobytes, and a runaway body must not fill the disk.
	MaxBody = 8 << 10
	// MaxEntries bounds the file: past it, new errors are not kept (the
	// user has a report to send already).
	MaxEntries = 500
)

// Path is the file in the rally home directory.
func Path(home string) string { return filepath.Join(home, "unclassified.jsonl") }

// File is the unclassified log. The zero File is not usable: Path is
// required.
type File struct {
	Path string
	// Keys are the API keys rally knows; their echoes are redacted from a
	// body as well as every key-shaped token.
	Keys []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Record keeps the failure f, which Classify read as r, unless the same
// error (provider, status, redacted body) is kept already or the file is
// full. It keeps nothing for a failure a rule recognised.
func (u *File) Record(ctx context.Context, f retry.Failure, r retry.Report) error {
	if !r.Signal.Fallback() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("unclassified: record: %w", err)
	}
	e := Entry{Provider: f.Provider, Status: f.Status, Body: u.redact(f.Body), Class: r.Class, Reason: r.Reason}
	if e.Body == "" && f.Err != nil {
		e.Body = u.redact(f.Err.Error())
	}
	unlock, err := filelock.Lock(ctx, u.Path+".lock")
	if err != nil {
		return fmt.Errorf("unclassified: record: %w", err)
	}
	defer unlock()
	// A file that does not read is started over: it holds reports to
	// send, not state anything depends on.
	all, _ := u.All()
	if len(all) >= MaxEntries {
		return nil
	}
	for _, old := range all {
		if old.Provider == e.Provider && old.Status == e.Status && old.Body == e.Body {
			return nil
		}
	}
	e.At = u.now().UTC()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, x := range append(all, e) {
		if err := enc.Encode(x); err != nil {
			return fmt.Errorf("unclassified: record: %w", err)
		}
	}
	if err := filelock.Write(u.Path, b.Bytes()); err != nil {
		return fmt.Errorf("unclassified: record: %w", err)
	}
	return nil
}

// All returns the kept entries, oldest first; none when there is no file.
// A line that does not parse is skipped.
func (u *File) All() ([]Entry, error) {
	fh, err := os.Open(u.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unclassified: read: %w", err)
	}
	defer fh.Close()
	var all []Entry
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 4*MaxBody)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Body != "" {
			all = append(all, e)
		}
	}
	if err := sc.Err(); err != nil {
		return all, fmt.Errorf("unclassified: read: %w", err)
	}
	return all, nil
}

// redact hides keys in a body, folds its trailing space and cuts it to
// MaxBody on a rune boundary.
func (u *File) redact(s string) string {
	s = strings.TrimSpace(redact.Secrets(s, u.Keys...))
	if len(s) <= MaxBody {
		return s
	}
	cut := MaxBody
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (u *File) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}
