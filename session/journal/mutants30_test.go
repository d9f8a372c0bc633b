package journal

// Tests for the mutant in wait.go that lived through issue 30's first
// rounds: InterruptedWait's read of the file's tail treats io.EOF (the
// file holds less than its Stat said) as the end of what there is, and
// every other read error as an error.

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestInterruptedWaitShortAndFailedReads. Bug caught: the test of the
// read's error inverted to err == io.EOF, so a file cut between Stat and
// ReadAt (a torn line repaired by the process that opens the session)
// makes the resume warn and forget the wait, while a read that fails
// reads as "no wait".
func TestInterruptedWaitShortAndFailedReads(t *testing.T) {
	t.Run("a file shorter than its stat size", func(t *testing.T) {
		// A sysfs attribute says 4096 bytes and holds a line: ReadAt
		// returns the line with io.EOF, the same short read as a session
		// file cut between Stat and ReadAt, with no race to arrange.
		path := ""
		for _, p := range []string{"/sys/devices/system/cpu/online", "/sys/kernel/mm/transparent_hugepage/enabled"} {
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			if data, err := os.ReadFile(p); err == nil && int64(len(data)) < st.Size() {
				path = p
				break
			}
		}
		if path == "" {
			t.Skipf("no sysfs attribute shorter than its stat size here (%s)", runtime.GOOS)
		}
		w, err := InterruptedWait(path)
		if err != nil || w != nil {
			t.Fatalf("InterruptedWait = %+v, %v; want no wait and no error", w, err)
		}
	})
	t.Run("a read that fails", func(t *testing.T) {
		// Open and Stat work on a directory; the read fails (EISDIR).
		w, err := InterruptedWait(t.TempDir())
		if err == nil || w != nil {
			t.Fatalf("InterruptedWait = %+v, %v; want an error", w, err)
		}
		if !strings.HasPrefix(err.Error(), "journal: interrupted wait: ") {
			t.Errorf("error %q, want it prefixed by the operation", err)
		}
	})
}
