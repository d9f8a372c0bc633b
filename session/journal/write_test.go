package journal

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is the session file on a disk that fills up: while full, a
// write stores room bytes of what it is given (a negative room: all but
// that many) and fails with ENOSPC, as write(2) does when the last block
// runs out.
type fullDisk struct {
	*os.File
	full         bool
	room         int
	truncateFail bool
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if !d.full {
		return d.File.Write(p)
	}
	room := d.room
	if room < 0 {
		room += len(p)
	}
	n, _ := d.File.Write(p[:min(room, len(p))])
	return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
}

func (d *fullDisk) Truncate(size int64) error {
	if d.truncateFail {
		return &os.PathError{Op: "truncate", Path: d.Name(), Err: syscall.EIO}
	}
	return d.File.Truncate(size)
}

// TestJournalFullDisk: an append that fails part-way reports the error and
// leaves no torn line behind, so the next append, once there is room again,
// continues the chain from the last entry written and the file loads
// without a warning. If the torn bytes cannot even be taken back, they
// stay on a line of their own and the next entry is still whole.
func TestJournalFullDisk(t *testing.T) {
	cases := []struct {
		name         string
		room         int
		truncateFail bool
		warn         string // the warning of the reload, "" for none
	}{
		{name: "nothing written", room: 0},
		{name: "part of the line written", room: 17},
		{name: "all but the newline written", room: -1},
		{name: "part written, truncate fails", room: 17, truncateFail: true, warn: "line 3: corrupt entry skipped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Create(t.TempDir(), "/p")
			if err != nil {
				t.Fatal(err)
			}
			disk := &fullDisk{File: j.f.(*os.File), truncateFail: tc.truncateFail}
			j.f = disk
			first, err := j.AppendMessage(jUser("u1", 1), false)
			if err != nil {
				t.Fatal(err)
			}
			lost := jAssistant("this answer does not fit on the disk", 2)
			disk.full, disk.room = true, tc.room
			_, err = j.AppendMessage(lost, false)
			if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "journal: append to "+j.Path()) {
				t.Fatalf("append on a full disk: %v", err)
			}
			disk.full = false
			next, err := j.AppendMessage(jUser("u2", 3), false)
			if err != nil {
				t.Fatal(err)
			}
			j.Close()

			b, _ := os.ReadFile(j.Path())
			ld, err := Load(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			jCheckWarn(t, "reload", ld.Warnings, tc.warn)
			if tc.warn == "" && strings.Count(string(b), "\n") != 3 {
				t.Errorf("file has %d lines, want 3:\n%s", strings.Count(string(b), "\n"), b)
			}
			if got := jTexts(ld.Messages); len(got) != 2 || got[0] != "u1" || got[1] != "u2" {
				t.Errorf("messages %q, want u1 u2", got)
			}
			last := ld.Entries[len(ld.Entries)-1]
			if last.ID != next || last.ParentID != first {
				t.Errorf("last entry %s (parent %s), want %s (parent %s)", last.ID, last.ParentID, next, first)
			}
		})
	}
}

// TestJournalOneWriter: a session open for writing cannot be opened for
// writing again, in this process or another (flock), until it is closed;
// reading it stays possible.
func TestJournalOneWriter(t *testing.T) {
	j, err := Create(t.TempDir(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendMessage(jUser("u1", 1), false); err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(j.Path())
	if !errors.Is(err, ErrLocked) || err.Error() != "journal: open "+j.Path()+": the session is open in another rally process" {
		t.Fatalf("second writer: %v", err)
	}
	if ld, err := Load(j.Path()); err != nil || len(ld.Messages) != 1 {
		t.Fatalf("Load while locked: %v", err)
	}
	j.Close()
	j2, ld, err := Open(j.Path())
	if err != nil || len(ld.Messages) != 1 {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, _, err := Open(j.Path()); !errors.Is(err, ErrLocked) {
		t.Errorf("third writer: %v", err)
	}
	j2.Close()
}

// TestJournalOpenDropsTornTail: Open cuts a torn last line off, however
// long (the backwards search for the last whole line crosses its read
// buffer), so the file again ends with a whole line.
func TestJournalOpenDropsTornTail(t *testing.T) {
	for _, n := range []int{1, 100, 200 << 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			j, err := Create(t.TempDir(), "/p")
			if err != nil {
				t.Fatal(err)
			}
			j.AppendMessage(jUser("u1", 1), false)
			j.Close()
			whole, _ := os.ReadFile(j.Path())
			torn := `{"type":"message","id":"dead","message":{"role":"user","content":"` + strings.Repeat("x", n)
			os.WriteFile(j.Path(), append(append([]byte(nil), whole...), torn...), 0o600)
			j2, ld, err := Open(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			jCheckWarn(t, "open", ld.Warnings, "line 3: torn last line skipped")
			if b, _ := os.ReadFile(j.Path()); string(b) != string(whole) {
				t.Errorf("after Open the file has %d bytes, want the %d of its whole lines", len(b), len(whole))
			}
			j2.Close()
		})
	}
}
