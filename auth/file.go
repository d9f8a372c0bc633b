package auth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Update reads auth.json, applies fn and saves the result, all under the
// file's lock, so two `rally auth add` at once cannot lose one another's
// credential.
func Update(ctx context.Context, path string, fn func(*File) error) error {
	unlock, err := lock(ctx, path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, err := Load(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	return f.Save(path)
}

// writeFile replaces path with data atomically: a reader sees the old file
// or the new one, never half of either, and a crash leaves no torn file.
// The file is created 0600 (os.CreateTemp's mode) and its directory 0700.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	done = true
	return nil
}

// lock takes the exclusive lock of the lock file at path, waiting for other
// holders (in this process or any other) until ctx ends. The returned
// function releases it.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: lock: %w", err)
	}
	// The lock call blocks in the kernel, so it runs aside and the caller
	// can give up on ctx; a lock taken after that is released at once.
	got := make(chan error, 1)
	go func() { got <- flock(f) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("auth: lock %s: %w", path, err)
		}
		return func() { funlock(f); f.Close() }, nil
	case <-ctx.Done():
		go func() {
			if <-got == nil {
				funlock(f)
			}
			f.Close()
		}()
		return nil, fmt.Errorf("auth: lock %s: %w", path, ctx.Err())
	}
}
