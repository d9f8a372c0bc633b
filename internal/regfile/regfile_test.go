//go:build unix

package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	fifo := filepath.Join(dir, "fifo")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 11), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string
		err        error
		msg        string
	}{
		{name: "regular", path: small, want: "hello"},
		{name: "too large", path: big, err: ErrTooLarge, msg: "the limit is 10"},
		{name: "fifo without a writer", path: fifo, err: ErrNotRegular, msg: "a FIFO"},
		{name: "symlink to /dev/zero", path: link, err: ErrNotRegular, msg: "a character device"},
		{name: "directory", path: dir, err: ErrNotRegular, msg: "a directory"},
		{name: "missing", path: filepath.Join(dir, "none"), err: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.path, 10)
			if tt.err == nil {
				if err != nil || string(got) != tt.want {
					t.Fatalf("Read = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Read = %q, %v; want %v mentioning %q", got, err, tt.err, tt.msg)
			}
		})
	}
}
