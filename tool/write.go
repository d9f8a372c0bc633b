package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rally-agent/rally/llm"
)

// Write is the write tool: it creates or replaces a whole file.
//
// The file is written atomically (a temporary file in the same directory,
// synced, then renamed over the target), so a reader or a crash never sees
// half a file. Missing parent directories are created. Replacing a file
// keeps its permission bits (a script stays executable); a new file gets
// 0644. Writing through a symlink replaces the
// file it points to, not the link.
type Write struct {
	Dir string
	// Deny lists files write refuses (see Options.Deny).
	Deny []string
}

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to write, relative to the working directory, absolute, or starting with ~."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"]
}`

// Spec describes write to the model.
func (w Write) Spec() llm.Tool {
	return llm.Tool{
		Name: "write",
		Description: "Create a file, or replace a file's whole content. Parent directories are created. " +
			"To change part of an existing file, prefer edit.",
		Parameters: json.RawMessage(writeSchema),
	}
}

// Run writes the file.
func (w Write) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path     *string `json:"path"`
		FilePath *string `json:"file_path"` // the name some models were trained on
		Content  *string `json:"content"`
	}
	if err := decode("write", args, &a); err != nil {
		return Result{}, err
	}
	p, err := pick("write", "path", map[string]*string{"path": a.Path, "file_path": a.FilePath}, "path", "file_path")
	if err != nil {
		return Result{}, err
	}
	switch {
	case p == nil:
		return Result{}, errors.New("write: missing required argument \"path\"")
	case a.Content == nil:
		return Result{}, errors.New("write: missing required argument \"content\"")
	}
	path, err := resolve("write", w.Dir, *p)
	if err != nil {
		return Result{}, err
	}
	if err := deny(w.Deny).check("write", path); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("write: %w", err)
	}

	existed := true
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		existed = false
	}
	if err := atomicWrite("write", path, []byte(*a.Content), 0o644); err != nil {
		return Result{}, err
	}
	verb := "wrote"
	if !existed {
		verb = "created"
	}
	lines := strings.Count(*a.Content, "\n")
	if *a.Content != "" && !strings.HasSuffix(*a.Content, "\n") {
		lines++
	}
	return text(fmt.Sprintf("%s %s: %d bytes, %s", verb, path, len(*a.Content), plural(lines, "line"))), nil
}

// atomicWrite replaces path with data through a temporary file in the same
// directory (rename is atomic only within a file system). An existing
// file's mode is kept; perm is for a new file. A symlink is followed so the
// link survives.
func atomicWrite(name, path string, data []byte, perm fs.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := perm
	switch info, err := os.Stat(path); {
	case err == nil && info.IsDir():
		return fmt.Errorf("%s: %s is a directory", name, path)
	case err == nil:
		mode = info.Mode().Perm()
	case errors.Is(err, fs.ErrPermission):
		return fsError(name, path, err)
	}
	// Other stat errors (not found, a parent that is a file) are reported
	// better by the steps below.
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create directory %s: %v", name, dir, unwrapPath(err))
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %v", name, dir, unwrapPath(err))
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("%s: %s: %v", name, path, unwrapPath(err))
	}
	// Sync before rename: otherwise a crash can leave the new name pointing
	// at an empty file on some file systems.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %s: %v", name, path, unwrapPath(err))
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("%s: %s: %v", name, path, unwrapPath(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %s: %v", name, path, unwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %s: %v", name, path, unwrapPath(err))
	}
	ok = true
	return nil
}

// unwrapPath drops the operation and temporary path from an *fs.PathError,
// which would only confuse the model.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
