package auth

import (
	"context"
	"fmt"

	"github.com/rally-agent/rally/internal/filelock"
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

// writeFile replaces path with data atomically (filelock.Write).
func writeFile(path string, data []byte) error {
	if err := filelock.Write(path, data); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// lock takes the exclusive lock of the lock file at path (filelock.Lock).
func lock(ctx context.Context, path string) (unlock func(), err error) {
	unlock, err = filelock.Lock(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return unlock, nil
}
