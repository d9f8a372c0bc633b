package auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/rally-agent/rally/internal/filelock"
	"github.com/rally-agent/rally/retry"
)

// DefaultBlock is how long a usage limit blocks a credential when the
// provider did not say when it resets. An hour is long enough not to hammer
// an exhausted key and short enough that a limit which was really a short
// one costs little.
const DefaultBlock = time.Hour

// Mark blocks one credential of a provider until a time.
type Mark struct {
	Provider string `json:"provider"`
	// ID is the credential's id.
	ID string `json:"id"`
	// Key is the Fingerprint of the blocked key, never the key. A mark
	// follows the key, not the name: after `export OPENAI_API_KEY=<another
	// key>` or re-adding an id with a new key, the new key is not blocked;
	// and one key stored under two ids is blocked under both. Empty
	// blocks the id whatever its key.
	Key string `json:"key,omitempty"`
	// Until is when the block ends by itself.
	Until time.Time `json:"blockedUntil"`
	// Reset is when the provider said the limit resets: on this limit,
	// or, for a limit that said nothing, on an earlier one of the same
	// credential whose reset had not come yet (carried over). Unlike
	// Until it is never a guess (DefaultBlock); zero when the provider
	// never said. Rotation.LearnedReset reads it.
	Reset time.Time `json:"resetAt,omitzero"`
	// Reason is the provider's error, redacted and short.
	Reason string `json:"reason,omitempty"`
}

// Blocks reports whether m applies to c (a credential of m's provider
// whose Key is filled in, as Pool returns them).
func (m Mark) Blocks(c Credential) bool {
	if m.Key != "" {
		return c.Key != "" && m.Key == Fingerprint(c.Key)
	}
	return m.ID == c.ID
}

// Fingerprint identifies a key without revealing it: 8 bytes of its
// SHA-256, in hex.
func Fingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// Marks stores usage-limit marks where every process that may use the same
// credentials sees them. FileMarks shares them between the processes of one
// machine; a network store can share them across a fleet.
type Marks interface {
	// Block records m. A credential already blocked keeps the later of the
	// two ends. A mark whose time has passed is not recorded.
	Block(ctx context.Context, m Mark) error
	// Blocked returns provider's marks that have not expired ("" returns
	// every provider's).
	Blocked(ctx context.Context, provider string) ([]Mark, error)
}

// MarksPath is the marks file beside auth.json.
func MarksPath(home string) string { return filepath.Join(home, "auth-marks.json") }

// FileMarks keeps marks in a JSON file, by default $RALLY_HOME/auth-marks.json.
// Writers take an exclusive flock on Path+".lock" and read, modify and
// atomically replace the file; readers need no lock, since the file is
// only ever replaced whole. Expired marks are ignored on read and dropped
// on write. The file holds no key, only fingerprints.
type FileMarks struct {
	Path string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

var _ Marks = (*FileMarks)(nil)

type marksFile struct {
	Version int    `json:"version"`
	Marks   []Mark `json:"marks"`
}

func (fm *FileMarks) now() time.Time {
	if fm.Now != nil {
		return fm.Now()
	}
	return time.Now()
}

// Block implements Marks.
func (fm *FileMarks) Block(ctx context.Context, m Mark) error {
	if m.Provider == "" || m.ID == "" {
		return errors.New("auth: block: a mark needs a provider and a credential id")
	}
	now := fm.now()
	if !m.Until.After(now) {
		return nil
	}
	unlock, err := lock(ctx, fm.Path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	// A file that does not parse is started over rather than refused:
	// marks are a cache of what providers said, and a broken one must not
	// stop every rally process from recording new ones.
	old, _ := fm.read()
	keep := old[:0]
	merged := false
	for _, o := range old {
		if !o.Until.After(now) {
			continue
		}
		if o.Provider == m.Provider && o.ID == m.ID && o.Key == m.Key {
			if m.Until.Before(o.Until) {
				m.Until = o.Until
			}
			o, merged = m, true
		}
		keep = append(keep, o)
	}
	if !merged {
		keep = append(keep, m)
	}
	slices.SortFunc(keep, func(a, b Mark) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID), a.Until.Compare(b.Until))
	})
	if err := filelock.WriteJSON(fm.Path, marksFile{Version: 1, Marks: keep}); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// Blocked implements Marks.
func (fm *FileMarks) Blocked(_ context.Context, provider string) ([]Mark, error) {
	all, err := fm.read()
	if err != nil {
		return nil, err
	}
	now := fm.now()
	var out []Mark
	for _, m := range all {
		if m.Until.After(now) && (provider == "" || m.Provider == provider) {
			out = append(out, m)
		}
	}
	return out, nil
}

// read returns every mark in the file, expired or not; a missing file has
// none.
func (fm *FileMarks) read() ([]Mark, error) {
	var f marksFile
	if err := filelock.ReadJSON(fm.Path, &f); err != nil {
		return nil, fmt.Errorf("auth: marks: %w", err)
	}
	return f.Marks, nil
}

// BlockedUntil returns when the block on c ends, or the zero time when no
// mark in marks blocks it.
func BlockedUntil(marks []Mark, c Credential) time.Time {
	var until time.Time
	for _, m := range marks {
		if m.Blocks(c) && m.Until.After(until) {
			until = m.Until
		}
	}
	return until
}

// Until describes a time ahead for humans: "15:04 (in 3h12m)", with the
// date when it is not today (retry's one wall-clock rule).
func Until(now, t time.Time) string {
	return retry.WallClock(now, t) + " (in " + retry.Roughly(t.Sub(now)) + ")"
}
