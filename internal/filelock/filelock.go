// Package filelock is how rally shares a small file between its
// processes: an exclusive flock(2) lock beside the file for writers, and
// atomic replacement (write a temp file, rename it over) so that readers
// need no lock. The usage-limit marks of package auth and the learned
// context windows of package window use it.
package filelock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrHeld is TryLock's error for a file another open file holds locked.
var ErrHeld = errors.New("filelock: held by another open file")

// Lock takes the exclusive lock of the lock file at path, waiting for
// other holders (in this process or any other) until ctx ends. The
// returned function releases it. The lock is tied to the open file, so a
// process that dies releases it.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return wait(ctx, f, path)
}

// LockDir takes the exclusive lock of the directory dir itself, waiting
// like Lock. It is for a file that users edit and keep in version control
// (a project's settings), beside which a lock file would be litter:
// replacing a file in dir by rename leaves dir's own inode, and so its
// lock, in place.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return wait(ctx, f, dir)
}

// wait takes the lock of the open file f, or gives up when ctx ends. The
// lock call blocks in the kernel, so it runs aside; a lock taken after the
// caller gave up is released at once.
func wait(ctx context.Context, f *os.File, path string) (unlock func(), err error) {
	got := make(chan error, 1)
	go func() { got <- flock(f) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return func() { funlock(f); f.Close() }, nil
	case <-ctx.Done():
		go func() {
			if <-got == nil {
				funlock(f)
			}
			f.Close()
		}()
		return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
	}
}

// Write replaces path with data atomically: a reader sees the old file or
// the new one, never half of either, and a crash leaves no torn file. The
// file is created 0600 and its directory 0700.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// ReadJSON decodes the JSON file at path into v. A missing or empty file
// leaves v as it is; one that does not parse is an error that names the
// file and says how to start over.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w (delete the file to start over)", path, err)
	}
	return nil
}

// WriteJSON replaces path atomically with v as indented JSON (Write).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return Write(path, append(b, '\n'))
}
