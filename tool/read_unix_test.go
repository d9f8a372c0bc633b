//go:build unix

package tool

import (
	"path/filepath"
	"testing"
)

func TestReadNamedPipe(t *testing.T) {
	// Opening a pipe with no writer would block forever; read must refuse
	// it without opening it.
	p := fifo(t)
	runErrCases(t, Read{Dir: filepath.Dir(p)}, []errCase{
		{"named pipe", map[string]any{"path": "fifo"}, "is not a regular file"},
	})
}
