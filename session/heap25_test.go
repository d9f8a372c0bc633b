package session

import (
	"testing"
	"unsafe"
)

// TestSessionSizeClass: a Session fits the 1,024-byte size class. At
// 1,032 bytes (its flags scattered among wider fields) it took 1,152, 128
// bytes more of every idle session's 2.5 KiB budget (issue 25). A field
// that must be added may take the next class: then say so in
// docs/benchmarks.md and raise this bound.
func TestSessionSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Session{}); n > 1024 {
		t.Errorf("a Session is %d bytes, past the 1,024-byte size class: group its small fields, or see the comment", n)
	}
}
