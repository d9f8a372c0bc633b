//go:build unix

package settings

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileRefusesNonRegular: a cloned repository's
// .rally/settings.json that is a FIFO or /dev/zero is refused at once,
// neither hanging nor reading without end.
func TestReadFileRefusesNonRegular(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a FIFO"},
		{"dev zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "a character device"},
		{"too large", func(p string) error {
			return os.WriteFile(p, []byte(`{"agent": {}}`+strings.Repeat(" ", MaxFileBytes)), 0o644)
		}, "the limit is 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := layout(t, "", `{}`).Project
			if err := os.Remove(src.Path); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(src.Path); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFile(src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadFile = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
