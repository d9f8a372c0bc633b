package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/rally-agent/rally/auth"
)

// TestEachSessionReadsAuthOnce: start-up reads auth.json once; of the
// sessions a long-running process starts, the first reads it not at all
// (it takes start-up's read) and each later one once, for its secrets and
// its credential alike, and a later one that finds it broken fails on
// that one read (bugs made to see it fail: a later session's secrets read
// apart from its credential; the failed read's error dropped, so that
// picking the credential reads the file again).
func TestEachSessionReadsAuthOnce(t *testing.T) {
	home := isolate(t)
	path := auth.Path(home)
	store := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store(`{"providers":{"openai":[{"id":"a","key":"sk-0123456789abcdef"}]}}`)
	opens := countOpens(t, path)
	f := runFlags{noSession: true}
	s := streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	rc, err := newRunConfig(s, &f)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	if got := opens(); got != 1 {
		t.Errorf("start-up opened auth.json %d times, want 1", got)
	}
	steps := []struct {
		name  string
		store string // auth.json's body before the session starts; "" leaves it
		exit2 bool   // the session fails to start, as rally exits 2
		opens int
	}{
		{"the first session", "", false, 0},
		{"a later session", "", false, 1},
		{"another later session", "", false, 1},
		{"a later session, auth.json broken", "{", true, 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.store != "" {
				store(st.store)
				opens() // the store's own open
			}
			env, err := newRunEnv(context.Background(), s, &f, rc)
			if err == nil {
				env.close()
			}
			var exit *exitError
			switch {
			case st.exit2 && !(errors.As(err, &exit) && exit.code == 2):
				t.Fatalf("session start: %v; want an error that exits 2", err)
			case !st.exit2 && err != nil:
				t.Fatalf("session start: %v", err)
			}
			if got := opens(); got != st.opens {
				t.Errorf("opened auth.json %d times, want %d", got, st.opens)
			}
		})
	}
}

// countOpens watches path and returns how many times it was opened since
// the last call. inotify merges an event into an identical one before it,
// so closes are watched too: open, close, open is three events.
func countOpens(t *testing.T, path string) func() int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_CLOSE_NOWRITE|syscall.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	return func() int {
		n := 0
		for {
			k, err := syscall.Read(fd, buf)
			if err == syscall.EAGAIN {
				return n // the events so far are all queued: the opens were synchronous
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < k; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_OPEN != 0 {
					n++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
