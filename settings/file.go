package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rally-agent/rally/internal/filelock"
	"github.com/rally-agent/rally/internal/regfile"
)

// MaxFileBytes is the largest settings file rally reads. Real ones are a few
// KiB; the cap is for a cloned repository whose .rally/settings.json is a
// link to /dev/zero or a huge file.
const MaxFileBytes = 1 << 20

// ErrChanged matches, with errors.Is, Save's error for a file that another
// process changed or removed since it was read: the caller's edit is based
// on a version that is gone, so nothing was written.
var ErrChanged = errors.New("settings file changed on disk")

// File is one settings file as the user wrote it: every key, known or not,
// in the user's order. Edits change the document at a path and leave the
// rest alone.
type File struct {
	Source
	doc    *object // nil until the file exists or is edited
	raw    []byte  // the bytes read, to notice a change on disk before a save
	exists bool
	dups   [][]string
}

// ReadFile reads a settings file. A missing file is an empty File, not an
// error. A file that is not a JSON object is an *Error with the line and
// column of the problem. A path that is not a regular file (a FIFO, a
// device) or holds more than MaxFileBytes is refused.
func ReadFile(src Source) (*File, error) {
	data, err := regfile.Read(src.Path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Source: src}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return ParseFile(src, data)
}

// ParseFile parses settings file contents read elsewhere. Empty contents
// are an empty object, so a freshly touched file works.
func ParseFile(src Source, data []byte) (*File, error) {
	f := &File{Source: src, raw: data, doc: newObject(), exists: true}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	doc, dups, err := parseDoc(data)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.File = src.Name
			return nil, e
		}
		// Anything else the decoder refuses (a number too large for a
		// float64, say) is still a malformed file, not a crash.
		return nil, &Error{File: src.Name, Msg: "invalid JSON: " + err.Error()}
	}
	o, ok := doc.(*object)
	if !ok {
		return nil, &Error{File: src.Name, Msg: "must be a JSON object, got " + describe(doc)}
	}
	f.doc, f.dups = o, dups
	return f, nil
}

// Exists reports whether the file was there when read (or has been saved).
func (f *File) Exists() bool { return f.exists }

// Get returns the raw JSON value the file itself holds at key, if any.
func (f *File) Get(key string) (json.RawMessage, bool) {
	path, err := ParsePath(key)
	if err != nil {
		return nil, false
	}
	v, ok := lookup(f.doc, path)
	if !ok {
		return nil, false
	}
	return bytes.TrimSuffix(encodeDoc(v, "  "), []byte("\n")), true
}

// Set puts a Go value (anything encoding/json can marshal) at key.
func (f *File) Set(key string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("set %s: %w", key, err)
	}
	return f.SetJSON(key, raw)
}

// SetJSON puts a JSON value at key, creating the objects on the way. The
// key must be a setting (see the schema); the value is not checked here:
// call Check or Merge before Save. A value that is an object replaces what
// the file had at key, it does not merge into it.
func (f *File) SetJSON(key string, raw json.RawMessage) error {
	path, err := settable(key)
	if err != nil {
		return fmt.Errorf("set settings: %w", err)
	}
	v, _, err := parseDoc(raw)
	if err != nil {
		return fmt.Errorf("set %s: value is not JSON: %w", key, err)
	}
	if f.doc == nil {
		f.doc = newObject()
	}
	var cur any = f.doc
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case *object:
			if last {
				c.set(seg, v)
				return nil
			}
			next, ok := c.get(seg)
			if _, isObj := next.(*object); !ok || (!isObj && !isArr(next)) {
				if schemaAt(path[:i+1]).isArray() {
					return fmt.Errorf("set %s: %s has no elements in %s", key, formatPath(path[:i+1]), f.Name)
				}
				next = newObject()
				c.set(seg, next)
			}
			cur = next
		case []any:
			n, _ := index(seg)
			if n >= len(c) {
				return fmt.Errorf("set %s: %s has %d %s in %s", key, formatPath(path[:i]), len(c), plural(len(c), "element"), f.Name)
			}
			if last {
				c[n] = v
				return nil
			}
			if _, isObj := c[n].(*object); !isObj && !isArr(c[n]) {
				c[n] = newObject()
			}
			cur = c[n]
		}
	}
	return nil
}

// Delete removes key from the file; a key that is not there is no error.
// Objects the deletion leaves empty go too, so unsetting the last retry
// key leaves no "retry": {} behind; objects that were empty before, or
// that hold other keys, stay as the user wrote them.
func (f *File) Delete(key string) error {
	path, err := settable(key)
	if err != nil {
		return fmt.Errorf("delete settings: %w", err)
	}
	parent, ok := lookup(f.doc, path[:len(path)-1])
	if !ok || f.doc == nil {
		return nil
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case *object:
		if _, had := p.get(last); !had {
			return nil
		}
		p.del(last)
	case []any:
		return fmt.Errorf("delete %s: cannot delete an array element; set the whole array", key)
	}
	f.pruneEmpty(path[:len(path)-1])
	return nil
}

// pruneEmpty removes the object at path if it is empty, then its parent
// if that leaves it empty, up to (not including) the document itself. It
// stops at an array: an element is the user's, even an empty one.
func (f *File) pruneEmpty(path []string) {
	for ; len(path) > 0; path = path[:len(path)-1] {
		v, _ := lookup(f.doc, path)
		if o, ok := v.(*object); !ok || len(o.keys) > 0 {
			return
		}
		parent, _ := lookup(f.doc, path[:len(path)-1])
		p, ok := parent.(*object)
		if !ok {
			return
		}
		p.del(path[len(path)-1])
	}
}

func isArr(v any) bool {
	_, ok := v.([]any)
	return ok
}

// settable parses key and checks that it names a setting, so a typo is
// refused rather than written where rally will never read it.
func settable(key string) ([]string, error) {
	path, err := ParsePath(key)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, errors.New("empty key")
	}
	if schemaAt(path) != nil {
		return path, nil
	}
	// Name the first unknown segment and suggest the nearest known key.
	for i := range path {
		if n := schemaAt(path[:i+1]); n == nil {
			msg := fmt.Sprintf("unknown key %q", formatPath(path[:i+1]))
			if s := closest(path[i], schemaAt(path[:i]).order); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", formatPath(joinPath(path[:i], s)))
			}
			return nil, errors.New(msg)
		}
	}
	return path, nil
}

// Bytes returns the file's contents as Save would write them: the user's
// keys in the user's order, indented as the file was.
func (f *File) Bytes() []byte {
	if f.doc == nil {
		return []byte("{}\n")
	}
	return encodeDoc(f.doc, detectIndent(f.raw))
}

// Save writes the file atomically: a temporary file in the same directory,
// renamed over the old one, so a crash leaves the old or the new file, never
// half of one. It keeps the old file's permissions (0644 for a new file)
// and writes through a symlink to its target. It refuses a document that
// fails Check, and a file that changed on disk since it was read
// (ErrChanged).
//
// The compare and the rename happen under an exclusive lock on the
// target's directory (no lock file to litter a repository), so of two savers that read the same version exactly
// one writes and the other gets ErrChanged: without it both compared
// before either renamed, and one edit was silently lost. Waiting for the
// lock ends with ctx.
func (f *File) Save(ctx context.Context) error {
	if _, err := f.Check(); err != nil {
		return err
	}
	data := f.Bytes()
	target := f.Path
	if real, err := filepath.EvalSymlinks(target); err == nil {
		target = real // a dotfiles symlink stays a symlink
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("save %s: %w", f.Name, err)
	}
	unlock, err := filelock.LockDir(ctx, filepath.Dir(target))
	if err != nil {
		return fmt.Errorf("save %s: %w", f.Name, err)
	}
	defer unlock()
	perm := fs.FileMode(0o644)
	cur, err := regfile.Read(target, MaxFileBytes)
	switch {
	case err == nil:
		if !f.exists || !bytes.Equal(cur, f.raw) {
			return fmt.Errorf("save %s: the file changed on disk since it was read; nothing written: %w", f.Name, ErrChanged)
		}
		if bytes.Equal(cur, data) {
			return nil
		}
		if fi, err := os.Stat(target); err == nil {
			perm = fi.Mode().Perm()
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("save %s: %w", f.Name, err)
	case f.exists:
		return fmt.Errorf("save %s: the file was removed since it was read; nothing written: %w", f.Name, ErrChanged)
	}
	if err := writeAtomic(target, data, perm); err != nil {
		return fmt.Errorf("save %s: %w", f.Name, err)
	}
	f.raw, f.exists = data, true
	return nil
}

func writeAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	// CreateTemp makes 0600 files; the umask must not decide either way.
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
